// The Usage page's figures from /admin/usage rows: the days of a range, the stacked series, the
// rankings and totals, and how dollars are written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dollars, lastDays, ranked, short, stacked, totals } from '../src/usage_report.js';

const row = (day, key, model, figures) => ({
  day, key_id: key && 'key_' + key, key_name: key, model,
  requests: 1, input_tokens: 0, output_tokens: 0, total_tokens: 0, usd: 0,
  unpriced_requests: 0, estimated_requests: 0, cache_hits: 0, saved_usd: 0, ...figures,
});

const rows = [
  row('2026-11-02', 'alice', 'gpt-4o', { usd: 1.5, total_tokens: 100 }),
  row('2026-11-02', 'bob', 'gpt-4o', { usd: 0.25, total_tokens: 50, requests: 2 }),
  row('2026-11-03', 'alice', 'claude', { usd: 3, total_tokens: 10, cache_hits: 1, saved_usd: 0.5 }),
  row('2026-11-03', 'bob', 'mine', { total_tokens: 40, unpriced_requests: 1, estimated_requests: 1 }),
  // Outside the range: counted by the rankings (the report asked for it), not drawn.
  row('2026-10-01', 'alice', 'gpt-4o', { usd: 7, total_tokens: 1 }),
];

test('the last n days are UTC days ending today, oldest first', () => {
  // Late on the 3rd in UTC, whatever the machine's zone.
  const range = lastDays(3, new Date(Date.UTC(2026, 10, 3, 23, 59)));
  assert.deepEqual(range, { from: '2026-11-01', to: '2026-11-03', days: ['2026-11-01', '2026-11-02', '2026-11-03'] });
  // Across a month and a year.
  assert.deepEqual(lastDays(2, new Date(Date.UTC(2027, 0, 1, 0, 0))).days, ['2026-12-31', '2027-01-01']);
});

test('spend per day stacked by model: the largest series first, unpriced models left out', () => {
  const days = ['2026-11-01', '2026-11-02', '2026-11-03'];
  const chart = stacked(rows, { days, by: 'model', measure: 'usd' });
  assert.deepEqual(chart.series.map((s) => [s.label, s.values, s.total]), [
    ['claude', [0, 0, 3], 3],
    ['gpt-4o', [0, 1.75, 0], 1.75],
  ]);
  assert.deepEqual(chart.perDay, [0, 1.75, 3]);
});

test('tokens per day stacked by key: every key, the unpriced model\'s tokens counted', () => {
  const days = ['2026-11-02', '2026-11-03'];
  const chart = stacked(rows, { days, by: 'key', measure: 'tokens' });
  assert.deepEqual(chart.series.map((s) => [s.id, s.label, s.values]), [
    ['key_alice', 'alice', [100, 10]],
    ['key_bob', 'bob', [50, 40]],
  ]);
  assert.deepEqual(chart.perDay, [150, 50]);
});

test('past the most series, the smallest fold into one', () => {
  const days = ['2026-11-01'];
  const many = [1, 2, 3, 4, 5].map((n) => row('2026-11-01', null, 'm' + n, { usd: n }));
  const chart = stacked(many, { days, by: 'model', measure: 'usd', most: 3 });
  assert.deepEqual(chart.series.map((s) => [s.id, s.label, s.total]), [['m5', 'm5', 5], ['m4', 'm4', 4], [null, '3 others', 6]]);
  assert.deepEqual(chart.perDay, [15]);
  // Exactly `most`: nothing folded.
  assert.equal(stacked(many.slice(0, 3), { days, by: 'model', measure: 'usd', most: 3 }).series.length, 3);
});

test('rankings: summed per key or model, the most spent first, then the most tokens', () => {
  assert.deepEqual(ranked(rows, 'model').map((m) => [m.label, m.usd, m.requests, m.unpriced_requests]),
    [['gpt-4o', 8.75, 4, 0], ['claude', 3, 1, 0], ['mine', 0, 1, 1]]);
  const keys = ranked(rows, 'key');
  assert.deepEqual(keys.map((k) => [k.id, k.label, k.usd, k.total_tokens, k.cache_hits, k.saved_usd]),
    [['key_alice', 'alice', 11.5, 111, 1, 0.5], ['key_bob', 'bob', 0.25, 90, 0, 0]]);
  // Requests without a virtual key.
  assert.deepEqual(ranked([row('2026-11-01', '', 'x', {})], 'key').map((k) => [k.id, k.label]), [['', 'no key']]);
});

test('totals add every figure; an absent figure counts nothing', () => {
  const all = totals([...rows, { day: '2026-11-03', model: 'old', requests: 3 }]);
  assert.equal(all.usd, 11.75);
  assert.equal(all.requests, 9);
  assert.equal(all.unpriced_requests, 1);
  assert.equal(all.estimated_requests, 1);
  assert.equal(all.saved_usd, 0.5);
  assert.equal(totals([]).usd, 0);
});

test('dollars: cents from a dollar up, the first two digits that count below', () => {
  assert.equal(dollars(0), '$0.00');
  assert.equal(dollars(undefined), '$0.00');
  assert.equal(dollars(1234.5), '$1,234.50');
  assert.equal(dollars(6), '$6.00');
  assert.equal(dollars(0.5), '$0.50');
  assert.equal(dollars(0.033), '$0.033');
  assert.equal(dollars(0.00000855), '$0.0000086');
  // A sum's binary noise is not shown.
  assert.equal(dollars(0.1 + 0.2), '$0.30');
  assert.equal(dollars(1e-12), '$0.00');
  assert.equal(short('usd', 1500), '$1.5K');
  assert.equal(short('usd', 0.25), '$0.25');
  assert.equal(short('tokens', 2_500_000), '2.5M');
});
