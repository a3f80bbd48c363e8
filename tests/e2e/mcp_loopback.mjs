// Preloaded (`node --import`) into an MCP server that listens with `app.listen(PORT)`: binds it to
// 127.0.0.1 only and prints the port it got (PORT=0 asks for a free one) as `LOOPBACK_PORT=<n>`.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || /^\d+$/.test(String(args[0]))) {
    const port = Number(args[0]);
    const callback = args.find((a) => typeof a === 'function');
    this.once('listening', () => process.stderr.write(`LOOPBACK_PORT=${this.address().port}\n`));
    return listen.call(this, port, '127.0.0.1', callback);
  }
  return listen.apply(this, args);
};
