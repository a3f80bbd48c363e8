// The operator's Usage page: what the gateway's traffic cost over the last 7, 30 or 90 days.
// Spend (or tokens) per day stacked by model or by key, drawn by Chart.js with the same figures
// as a table; the keys and models ranked; the requests that had no price or whose usage was
// estimated; each key's USD budget; the shown range as CSV. Everything comes from one
// `/admin/usage?group_by=day,key,model` report (and /admin/keys for the budgets).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { ApiError } from './api.js';
import { adminHeaders, useAdmin } from './admin.js';
import { count, dollars, lastDays, ranked, short, stacked, totals } from './usage_report.js';

// Only the pieces a stacked bar chart uses, so the rest of Chart.js stays out of the bundle.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);
Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
Chart.defaults.color = '#5f6368';

// Okabe and Ito's colours, told apart with any colour vision (their yellow, too pale on white,
// replaced); grey for the series folded into "others".
const PALETTE = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#7a5195', '#4d4d4d'];
const OTHERS = '#b0b3b8';
const RANGES = [7, 30, 90];
const MEASURE_NAMES = { usd: 'Dollars', tokens: 'Tokens' };
const BY_NAMES = { model: 'Model', key: 'Key' };
const PERIOD = { day: 'today', week: 'this week', month: 'this month' };
const dayName = (day) => new Date(day + 'T00:00:00Z').toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

// A row of buttons of which one is pressed.
function Choice({ id, label, options, value, onChange }) {
  return (
    <div class="choice">
      <span class="choice-label" id={id}>{label}</span>
      <div class="segmented" role="group" aria-labelledby={id}>
        {options.map(([id, name]) => (
          <button key={id} type="button" aria-pressed={value === id} onClick={() => onChange(id)}>{name}</button>
        ))}
      </div>
    </div>
  );
}

// The stacked bars, redrawn whole when the figures change (a chart of at most 90 bars).
function StackedChart({ chart, measure, description }) {
  const canvas = useRef(null);
  useEffect(() => {
    const format = measure === 'usd' ? dollars : count;
    const drawn = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: chart.days,
        datasets: chart.series.map((s, i) => ({
          label: s.label,
          data: s.values,
          backgroundColor: s.id === null ? OTHERS : PALETTE[i % PALETTE.length],
          borderWidth: 0,
        })),
      },
      options: {
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked: true, grid: { display: false },
            ticks: { autoSkipPadding: 12, maxRotation: 0, callback(value) { return dayName(this.getLabelForValue(value)); } } },
          y: { stacked: true, beginAtZero: true, ticks: { callback: (v) => short(measure, v) } },
        },
        plugins: {
          legend: { position: 'bottom', labels: { boxWidth: 12, boxHeight: 12 } },
          tooltip: {
            callbacks: {
              title: (items) => items[0]?.label,
              label: (item) => `${item.dataset.label}: ${format(item.raw)}`,
              footer: (items) => `In all: ${format(chart.perDay[items[0].dataIndex])}`,
            },
          },
        },
      },
    });
    return () => drawn.destroy();
  }, [chart, measure]);
  return (
    <div class="usage-chart">
      <canvas ref={canvas} role="img" aria-label={description} />
    </div>
  );
}

// The chart's figures as a table: the days with any, a column per series.
function ChartTable({ chart, measure }) {
  const format = measure === 'usd' ? dollars : count;
  const days = chart.days.map((day, i) => ({ day, i })).filter(({ i }) => chart.perDay[i] > 0).reverse();
  return (
    <details class="chart-table">
      <summary>The chart as a table</summary>
      <div class="table-scroll">
        <table class="cards">
          <caption class="help">{MEASURE_NAMES[measure]} per day; days without any are left out.</caption>
          <thead><tr><th>Day</th>{chart.series.map((s) => <th key={s.id ?? '…'}>{s.label}</th>)}<th>In all</th></tr></thead>
          <tbody>
            {days.map(({ day, i }) => (
              <tr key={day} data-day={day}>
                <th scope="row" data-label="Day">{day}</th>
                {chart.series.map((s) => <td key={s.id ?? '…'} data-label={s.label}>{format(s.values[i])}</td>)}
                <td data-label="In all">{format(chart.perDay[i])}</td>
              </tr>
            ))}
            {!days.length && <tr><td colSpan={chart.series.length + 2} class="muted">Nothing in these days.</td></tr>}
          </tbody>
        </table>
      </div>
    </details>
  );
}

// Keys or models with their spend and traffic, the most spent first.
function Ranking({ title, rows, by }) {
  const name = BY_NAMES[by];
  return (
    <section aria-labelledby={'top-' + by}>
      <h3 id={'top-' + by}>{title}</h3>
      <div class="table-scroll">
        <table class={'top-' + by + ' cards'}>
          <thead><tr><th>{name}</th><th>Spend</th><th>Requests</th><th>Tokens</th><th>Cache hits</th><th>Saved</th><th>Unpriced</th></tr></thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-id={r.id}>
                <th scope="row" data-label={name}>{r.label}</th>
                <td data-label="Spend">{!r.usd && r.unpriced_requests ? <span class="warning">no price</span> : dollars(r.usd)}</td>
                <td data-label="Requests">{count(r.requests)}</td>
                <td data-label="Tokens">{count(r.total_tokens)}</td>
                <td data-label="Cache hits">{count(r.cache_hits)}</td>
                <td data-label="Saved">{dollars(r.saved_usd)}</td>
                <td data-label="Unpriced" class={r.unpriced_requests ? 'warning' : undefined}>{count(r.unpriced_requests)}</td>
              </tr>
            ))}
            {!rows.length && <tr><td colSpan={7} class="muted">No requests in these days.</td></tr>}
          </tbody>
        </table>
      </div>
    </section>
  );
}

// Each key with a USD budget: what it spent in its period against the budget. Shown once the
// keys list carries USD budgets (`budget.usd`, `usage.spent_usd`).
function Budgets({ keys }) {
  const budgeted = keys.filter((k) => k.budget?.usd > 0);
  if (!budgeted.length) return null;
  return (
    <section aria-labelledby="budgets">
      <h3 id="budgets">Budgets</h3>
      <div class="table-scroll">
        <table class="budgets cards">
          <thead><tr><th>Key</th><th>Spent</th><th>Budget</th><th>Used</th></tr></thead>
          <tbody>
            {budgeted.map((k) => {
              const spent = k.usage?.spent_usd ?? 0;
              const budget = k.budget.usd;
              const share = Math.round((spent / budget) * 100);
              return (
                <tr key={k.id} data-key-id={k.id} class={spent >= budget ? 'over' : undefined}>
                  <th scope="row" data-label="Key">{k.name}</th>
                  <td data-label="Spent">{dollars(spent)} {PERIOD[k.budget.period] ?? `a ${k.budget.period}`}</td>
                  <td data-label="Budget">{dollars(budget)} a {k.budget.period}</td>
                  <td data-label="Used">
                    <meter min="0" max={budget} value={Math.min(spent, budget)} low={budget * 0.75} high={budget * 0.9} optimum="0"
                      aria-label={`${k.name}: ${share}% of its budget spent`} />
                    <span class="share">{share}%</span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

// Downloads the report as CSV under the name the gateway gives it. A link cannot send the admin
// key, so it is fetched and handed to the browser as a file.
async function downloadCsv(query) {
  const res = await fetch('/admin/usage?' + query + '&format=csv', { headers: adminHeaders() });
  if (!res.ok) {
    let body = null;
    try { body = await res.json(); } catch { /* not JSON: the status says it */ }
    throw new ApiError(res.status, body);
  }
  const named = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '');
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = named ? named[1] : 'usage.csv';
  document.body.append(link);
  link.click();
  link.remove();
  // Not at once: revoking the address while the browser starts the download can cancel it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function Usage({ onRefused }) {
  const [range, setRange] = useState(30);
  const [measure, setMeasure] = useState('usd');
  const [by, setBy] = useState('model');
  const [exportError, setExportError] = useState('');
  // The days are today's: a page left open past midnight asks for the new day when it changes range.
  const { from, to, days } = useMemo(() => lastDays(range), [range]);
  const query = `group_by=day,key,model&from=${from}&to=${to}`;
  const { data, error } = useAdmin('/admin/usage?' + query, onRefused);
  const keys = useAdmin('/admin/keys', onRefused);
  const rows = data?.data;
  const all = useMemo(() => rows && totals(rows), [rows]);
  const chart = useMemo(() => rows && stacked(rows, { days, by, measure }), [rows, days, by, measure]);
  const models = useMemo(() => rows && ranked(rows, 'model'), [rows]);
  const byKey = useMemo(() => rows && ranked(rows, 'key'), [rows]);
  const exportCsv = async () => {
    try {
      await downloadCsv(query);
      setExportError('');
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) onRefused();
      else setExportError('Export failed: ' + err.message);
    }
  };
  const unpricedModels = models?.filter((m) => m.unpriced_requests).map((m) => m.label) ?? [];
  const what = measure === 'usd' ? 'Spend' : 'Tokens';
  return (
    <>
      <h2>Usage, the last {range} days</h2>
      <div class="usage-controls">
        <Choice id="usage-days" label="Days" options={RANGES.map((n) => [n, `${n} days`])} value={range} onChange={setRange} />
        <Choice id="usage-measure" label="Show" options={Object.entries(MEASURE_NAMES)} value={measure} onChange={setMeasure} />
        <Choice id="usage-by" label="Stack by" options={Object.entries(BY_NAMES)} value={by} onChange={setBy} />
        <button type="button" class="export" onClick={exportCsv}>Export CSV</button>
      </div>
      {(error || exportError) && <p class="error" role="alert">{error || exportError}</p>}
      {!rows ? <p class="loading">Loading…</p> : (
        <>
          <dl class="usage-totals">
            <div data-total="usd"><dt>Spend</dt><dd>{dollars(all.usd)}</dd></div>
            <div data-total="requests"><dt>Requests</dt><dd>{count(all.requests)}</dd></div>
            <div data-total="tokens"><dt>Tokens</dt><dd>{count(all.total_tokens)}</dd></div>
            <div data-total="cache"><dt>Cache hits</dt><dd>{count(all.cache_hits)} <span class="meta">saved {dollars(all.saved_usd)}</span></dd></div>
            <div data-total="estimated"><dt>Estimated</dt><dd>{count(all.estimated_requests)}</dd></div>
            <div data-total="unpriced" class={all.unpriced_requests ? 'alarm' : undefined}><dt>Unpriced</dt><dd>{count(all.unpriced_requests)}</dd></div>
          </dl>
          {all.unpriced_requests > 0 && (
            <p class="notice unpriced" role="status">
              {count(all.unpriced_requests)} {all.unpriced_requests === 1 ? 'request' : 'requests'} to {unpricedModels.join(', ')} had
              no price: counted here, but not in the dollars. Give {unpricedModels.length === 1 ? 'its model' : 'their models'} a
              price under <code>pricing.overrides</code> in the configuration (docs/operations.md, "Prices and cost").
            </p>
          )}
          {all.estimated_requests > 0 && (
            <p class="help">The usage of {count(all.estimated_requests)} {all.estimated_requests === 1 ? 'request was estimated: its upstream' : 'requests was estimated: their upstream'} reported none.</p>
          )}
          <h3>{what} per day by {by}</h3>
          <StackedChart chart={chart} measure={measure}
            description={`${what} per day by ${by}, ${from} to ${to}: ${measure === 'usd' ? dollars(all.usd) : count(all.total_tokens)} in all. The table below has the same figures.`} />
          <ChartTable chart={chart} measure={measure} />
          <Ranking title="Top keys" rows={byKey} by="key" />
          <Ranking title="Top models" rows={models} by="model" />
          {keys.data && <Budgets keys={keys.data.data} />}
        </>
      )}
    </>
  );
}
