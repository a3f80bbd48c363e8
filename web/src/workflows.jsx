// Workflows: listed by category; each runs from a form generated from its parameter schema, or
// from free text the model turns into parameters. The run shows in the conversation.
import { useEffect, useState } from 'preact/hooks';
import { get, post } from './api.js';

const initialValues = (schema) => Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([name, p]) =>
  [name, p.default !== undefined ? p.default : p.type === 'boolean' ? false : '']));

// The form's values as parameters: empty optional fields left out, numbers as numbers.
const toParameters = (schema, values) => {
  const out = {};
  const required = new Set(schema?.required ?? []);
  for (const [name, p] of Object.entries(schema?.properties ?? {})) {
    const v = values[name];
    if (p.type === 'boolean') out[name] = !!v;
    else if (v === '' && !required.has(name)) continue;
    else if (p.type === 'integer' || p.type === 'number') out[name] = Number(v);
    else out[name] = v;
  }
  return out;
};

function SchemaForm({ workflow, disabled, onRun }) {
  const schema = workflow.parameters ?? {};
  const required = new Set(schema.required ?? []);
  const [values, setValues] = useState(() => initialValues(schema));
  const [free, setFree] = useState(false);
  const [text, setText] = useState('');
  const submit = (e) => {
    e.preventDefault();
    onRun(free ? { input: text } : { parameters: toParameters(schema, values) });
  };
  const fields = Object.entries(schema.properties ?? {});
  return (
    <form class="workflow-form" onSubmit={submit} aria-label={`Run ${workflow.name}`}>
      <div class="segmented" role="group" aria-label="How to give the parameters">
        <button type="button" aria-pressed={!free} onClick={() => setFree(false)}>Form</button>
        <button type="button" aria-pressed={free} onClick={() => setFree(true)}>Describe in words</button>
      </div>
      {free ? (
        <>
          <label for={'wf-text-' + workflow.id}>What should it do?</label>
          <textarea id={'wf-text-' + workflow.id} rows={3} required value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </>
      ) : fields.map(([name, p]) => {
        const id = `wf-${workflow.id}-${name}`;
        const help = p.description ? id + '-help' : undefined;
        const set = (value) => setValues({ ...values, [name]: value });
        let input;
        if (Array.isArray(p.enum))
          input = (
            <select id={id} required={required.has(name)} aria-describedby={help} value={values[name]}
              onChange={(e) => set(e.currentTarget.value)}>
              {!required.has(name) && <option value="">—</option>}
              {p.enum.map((v) => <option key={String(v)} value={v}>{String(v)}</option>)}
            </select>
          );
        else if (p.type === 'boolean')
          input = <input id={id} type="checkbox" checked={!!values[name]} aria-describedby={help} onChange={(e) => set(e.currentTarget.checked)} />;
        else if (p.type === 'integer' || p.type === 'number')
          input = <input id={id} type="number" step={p.type === 'integer' ? 1 : 'any'} min={p.minimum} max={p.maximum}
            required={required.has(name)} aria-describedby={help} value={values[name]} onInput={(e) => set(e.currentTarget.value)} />;
        else if ((p.maxLength ?? 0) > 200 || p.format === 'multiline')
          input = <textarea id={id} rows={4} required={required.has(name)} aria-describedby={help} value={values[name]} onInput={(e) => set(e.currentTarget.value)} />;
        else
          input = <input id={id} required={required.has(name)} minLength={p.minLength} maxLength={p.maxLength}
            aria-describedby={help} value={values[name]} onInput={(e) => set(e.currentTarget.value)} />;
        return (
          <div class="field" key={name}>
            <label for={id}>{name}{required.has(name) && <span aria-hidden="true"> *</span>}</label>
            {input}
            {p.description && <p class="help" id={help}>{p.description}</p>}
          </div>
        );
      })}
      <button type="submit" class="primary" disabled={disabled}>Run {workflow.name}</button>
    </form>
  );
}

export function WorkflowPanel({ chatId, busy, onStarted }) {
  const [categories, setCategories] = useState(null);
  const [chosen, setChosen] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    get('/context/workflows').then((r) => setCategories(r.categories)).catch((err) => setError(err.message));
  }, []);
  const run = async (body) => {
    try {
      const started = await post(`/context/workflows/${encodeURIComponent(chosen.id)}/runs`, { chat_id: chatId, ...body });
      setError('');
      onStarted(started.run_id);
    } catch (err) {
      setError(err.message);
    }
  };
  if (!categories) return error ? <p class="error">{error}</p> : <p class="loading">Loading…</p>;
  return (
    <section class="panel workflows">
      <h2>Workflows</h2>
      {!categories.length && <p class="muted">No workflows are configured (workflows/*.yaml).</p>}
      {categories.map((c) => (
        <div key={c.category} class="category">
          <h3>{c.category}</h3>
          <ul>
            {c.workflows.map((w) => (
              <li key={w.id}>
                <button type="button" class="link" aria-expanded={chosen?.id === w.id}
                  onClick={() => setChosen(chosen?.id === w.id ? null : w)}>{w.name}</button>
                <span class="muted"> {w.description}</span>
                {chosen?.id === w.id && <SchemaForm workflow={w} disabled={busy} onRun={run} />}
              </li>
            ))}
          </ul>
        </div>
      ))}
      {busy && <p class="muted">A run is in progress in this chat; workflows can start once it ends.</p>}
      {error && <p class="error" role="alert">{error}</p>}
    </section>
  );
}
