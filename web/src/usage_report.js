// The Usage page's figures, shaped from the rows of `GET /admin/usage?group_by=day,key,model`:
// the days of a range, spend or tokens per day stacked by model or by key, the keys and models
// ranked, the totals, and how dollars and counts are written. Pure: web/test/usage.test.mjs.

const DAY_MS = 86_400_000;

// The figures a row carries that add up (any one absent counts 0).
export const FIGURES = ['requests', 'input_tokens', 'output_tokens', 'total_tokens', 'usd',
  'unpriced_requests', 'estimated_requests', 'cache_hits', 'saved_usd'];

// What a chart can measure: dollars (priced requests only) or tokens.
export const MEASURES = {
  usd: (r) => r.usd ?? 0,
  tokens: (r) => r.total_tokens ?? 0,
};

// The `count` UTC days that end with `today`'s, oldest first, as the ledger names days.
export function lastDays(count, today = new Date()) {
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const days = [];
  for (let i = count - 1; i >= 0; --i) days.push(new Date(end - i * DAY_MS).toISOString().slice(0, 10));
  return { from: days[0], to: days[days.length - 1], days };
}

// A row's key or model: its id and the name to show. Requests made without a virtual key (a
// gateway without keys) have an empty key id.
export function groupOf(row, by) {
  if (by === 'key') return { id: row.key_id ?? '', label: row.key_name || row.key_id || 'no key' };
  return { id: row.model ?? '', label: row.model || 'no model' };
}

const zero = () => Object.fromEntries(FIGURES.map((f) => [f, 0]));
const add = (into, row) => {
  for (const f of FIGURES) into[f] += row[f] ?? 0;
  return into;
};

// Every figure summed over `rows`.
export function totals(rows) {
  return rows.reduce(add, zero());
}

// The keys or models (`by`) with their figures summed, the most spent first, then the most
// tokens, then by name.
export function ranked(rows, by) {
  const groups = new Map();
  for (const row of rows) {
    const { id, label } = groupOf(row, by);
    if (!groups.has(id)) groups.set(id, { id, label, ...zero() });
    add(groups.get(id), row);
  }
  return [...groups.values()].sort((a, b) => b.usd - a.usd || b.total_tokens - a.total_tokens
    || a.label.localeCompare(b.label));
}

// `measure` per day over `days`, one series per key or model (`by`), the largest first. Past
// `most` series, the smallest are folded into one ("3 others") so that the colours stay apart.
// Series that measure nothing in these days (an unpriced model's dollars) are left out.
// Returns { days, series: [{ id, label, values, total }], perDay }.
export function stacked(rows, { days, by, measure, most = 8 }) {
  const index = new Map(days.map((d, i) => [d, i]));
  const value = MEASURES[measure];
  const groups = new Map();
  for (const row of rows) {
    const at = index.get(row.day);
    const v = value(row);
    if (at === undefined || !v) continue;
    const { id, label } = groupOf(row, by);
    if (!groups.has(id)) groups.set(id, { id, label, values: days.map(() => 0), total: 0 });
    const g = groups.get(id);
    g.values[at] += v;
    g.total += v;
  }
  let series = [...groups.values()].sort((a, b) => b.total - a.total || a.label.localeCompare(b.label));
  if (series.length > most) {
    const rest = series.slice(most - 1);
    const other = { id: null, label: `${rest.length} others`, values: days.map(() => 0), total: 0 };
    for (const g of rest) {
      g.values.forEach((v, i) => { other.values[i] += v; });
      other.total += g.total;
    }
    series = [...series.slice(0, most - 1), other];
  }
  const perDay = days.map((_, i) => series.reduce((sum, g) => sum + g.values[i], 0));
  return { days, series, perDay };
}

// Dollars as an operator reads them: cents from a dollar up; below, enough places to show the
// first two digits that are not zero (a request costs a fraction of a cent), at most 8.
export function dollars(usd) {
  const v = usd ?? 0;
  const size = Math.abs(v);
  const places = size === 0 || size >= 1 ? 2 : Math.min(8, Math.max(2, Math.ceil(-Math.log10(size)) + 1));
  return v.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: places });
}

export const count = (n) => (n ?? 0).toLocaleString('en-US');

// A measure's value in a chart's axis: short ($1.2K, 3.4M tokens).
export function short(measure, v) {
  const text = v.toLocaleString('en-US', { notation: 'compact', maximumSignificantDigits: 3 });
  return measure === 'usd' ? (v > 0 && v < 1 ? dollars(v) : '$' + text) : text;
}
