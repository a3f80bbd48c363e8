// The Markdown of model answers: structure kept, raw HTML shown as text, links safe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown } from '../src/markdown.js';

test('headings, emphasis, highlighted code and safe links', () => {
  const html = renderMarkdown('## Title\n\n**bold** [docs](https://example.com)\n\n```js\nconst x = 1;\n```\n');
  assert.match(html, /<h2>Title<\/h2>/);
  assert.match(html, /<strong>bold<\/strong>/);
  assert.match(html, /<a href="https:\/\/example.com" target="_blank" rel="noopener noreferrer">docs<\/a>/);
  assert.match(html, /<pre><code class="language-js"><span class="hljs-keyword">const<\/span>/);
});

test('raw HTML and script links stay text', () => {
  const html = renderMarkdown('<img src=x onerror="alert(1)"> <script>alert(2)</script>\n\n[x](javascript:alert(3))');
  assert.doesNotMatch(html, /<img|<script|href="javascript/);
  assert.match(html, /&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;/);
});

test('an unknown language and an unclosed fence (a stream cut mid-block) are plain code', () => {
  assert.match(renderMarkdown('```nosuch\n<b>\n```'), /<pre><code class="language-nosuch">&lt;b&gt;\n<\/code><\/pre>/);
  assert.match(renderMarkdown('text\n\n```py\ndef f('), /<pre><code class="language-py"><span class="hljs-keyword">def<\/span>/);
});
