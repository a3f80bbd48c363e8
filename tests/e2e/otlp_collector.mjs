// A stand-in for an OpenTelemetry collector's OTLP/HTTP receiver: POST /v1/traces with
// application/x-protobuf, decoded with the official proto definitions (the code protobufjs
// generated from opentelemetry-proto, as @opentelemetry/otlp-transformer ships it). Like the
// collector it refuses another path (404), another content type (415) and a body that does not
// decode (400); beyond that each body must verify and encode back to the very bytes it came as,
// so a field sent with the wrong number or wire type (which a decoder skips) fails the test.
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { opentelemetry } = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = opentelemetry.proto.collector.trace.v1;
const { SpanKind } = opentelemetry.proto.trace.v1.Span;
const { StatusCode } = opentelemetry.proto.trace.v1.Status;

const hex = (bytes) => Buffer.from(bytes ?? []).toString('hex');

function plain(value) {
  if (value.stringValue !== undefined && value.stringValue !== null) return value.stringValue;
  if (value.boolValue !== undefined && value.boolValue !== null) return value.boolValue;
  if (value.intValue !== undefined && value.intValue !== null) return Number(value.intValue);
  if (value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue;
  if (value.arrayValue) return value.arrayValue.values.map(plain);
  throw new Error(`an attribute value of no known kind: ${JSON.stringify(value)}`);
}

function attributes(list) {
  const out = {};
  for (const kv of list ?? []) {
    if (kv.key in out) throw new Error(`attribute ${kv.key} given twice`);
    out[kv.key] = plain(kv.value);
  }
  return out;
}

// `tls`: {cert, key} to listen with HTTPS, as a collector behind a private CA would.
export async function startCollector({ tls } = {}) {
  const spans = [];
  const problems = [];
  const handle = (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return res.writeHead(404).end();
      if (req.headers['content-type'] !== 'application/x-protobuf') return res.writeHead(415).end();
      const body = Buffer.concat(chunks);
      let request;
      try {
        request = ExportTraceServiceRequest.decode(body);
      } catch (e) {
        problems.push(`undecodable: ${e.message}`);
        return res.writeHead(400).end();
      }
      const invalid = ExportTraceServiceRequest.verify(request);
      if (invalid) problems.push(`does not verify: ${invalid}`);
      if (!Buffer.from(ExportTraceServiceRequest.encode(request).finish()).equals(body))
        problems.push('re-encoded, the request is not the bytes sent: a field the schema does not know');
      for (const rs of request.resourceSpans) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              resource,
              scope: ss.scope?.name,
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              traceState: s.traceState,
              name: s.name,
              kind: SpanKind[s.kind],
              start: BigInt(s.startTimeUnixNano.toString()),
              end: BigInt(s.endTimeUnixNano.toString()),
              attributes: attributes(s.attributes),
              status: { code: StatusCode[s.status?.code ?? 0], message: s.status?.message ?? '' },
              headers: req.headers,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end(Buffer.from(ExportTraceServiceResponse.encode({}).finish()));
    });
  };
  const server = tls ? createTlsServer(tls, handle) : createServer(handle);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${server.address().port}`,
    spans,
    problems,
    trace: (traceId) => spans.filter((s) => s.traceId === traceId),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
