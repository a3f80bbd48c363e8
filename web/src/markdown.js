// Model answers as Markdown: markdown-it with raw HTML off (a tag in the text is shown as text,
// never parsed), its link check (no javascript:, vbscript:, file: or data: links), links opened
// in a new tab without the opener or the referrer, and fenced code highlighted by highlight.js
// (the languages below; any other is shown plain). Pure: the same text gives the same markup.
import MarkdownIt from 'markdown-it';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const languages = { bash, c, cpp, css, diff, go, ini, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);

const md = new MarkdownIt({
  html: false,
  linkify: true,
  // Returning '' lets markdown-it escape the code itself.
  highlight: (code, lang) => {
    if (!lang || !hljs.getLanguage(lang)) return '';
    try {
      return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    } catch {
      return '';
    }
  },
});

const renderToken = (tokens, i, options, env, self) => self.renderToken(tokens, i, options);
const linkOpen = md.renderer.rules.link_open ?? renderToken;
md.renderer.rules.link_open = (tokens, i, options, env, self) => {
  tokens[i].attrSet('target', '_blank');
  tokens[i].attrSet('rel', 'noopener noreferrer');
  return linkOpen(tokens, i, options, env, self);
};

export const renderMarkdown = (text) => md.render(text ?? '');
