// A Server-Sent Events parser (the WHATWG rules the console needs): feed it text as it arrives;
// it calls `onEvent({id, event, data})` for every complete event. Comments (`: keep-alive`) and
// events without data are skipped; CRLF, CR and LF all end lines; data lines are joined by "\n".
export function sseParser(onEvent) {
  let buffer = '';
  let data = [];
  let event = '';
  let id;
  const line = (text) => {
    if (text === '') {
      if (data.length) onEvent({ id, event: event || 'message', data: data.join('\n') });
      data = [];
      event = '';
      id = undefined;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
  };
  return (chunk) => {
    buffer += chunk;
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      if (end < 0) return;
      // A lone CR at the buffer's end may be the first half of CRLF: wait for more.
      if (buffer[end] === '\r' && end === buffer.length - 1) return;
      const width = buffer.startsWith('\r\n', end) ? 2 : 1;
      line(buffer.slice(0, end));
      buffer = buffer.slice(end + width);
    }
  };
}
