// A unified diff rendered by diff2html, inline or side by side.
import { useMemo } from 'preact/hooks';
import { html } from 'diff2html';

export function Diff({ diff, mode = 'line-by-line', label }) {
  const markup = useMemo(() => (diff ? html(diff, {
    outputFormat: mode === 'side-by-side' ? 'side-by-side' : 'line-by-line',
    drawFileList: false,
    matching: 'lines',
  }) : ''), [diff, mode]);
  if (!diff) return <p class="muted">No changes.</p>;
  // diff2html escapes the file's text; the markup is its own.
  return <div class="diff" role="region" aria-label={label ?? 'Diff'} dangerouslySetInnerHTML={{ __html: markup }} />;
}

export function DiffModeToggle({ mode, setMode }) {
  return (
    <div class="segmented" role="group" aria-label="Diff layout">
      <button type="button" aria-pressed={mode === 'line-by-line'} onClick={() => setMode('line-by-line')}>Inline</button>
      <button type="button" aria-pressed={mode === 'side-by-side'} onClick={() => setMode('side-by-side')}>Side by side</button>
    </div>
  );
}

// diff2html wants file headers; a hunk alone ("@@ …") gets them from `path`.
export const withHeaders = (diff, path) =>
  diff.startsWith('--- ') ? diff : `--- a/${path}\n+++ b/${path}\n${diff}`;
