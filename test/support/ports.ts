import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The lowest port of the kernel's ephemeral range: every outgoing connection and every server
 * that listens on port 0 takes its port from there.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const LOW = ephemeralLow();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * A port free on 127.0.0.1 now, for a server that binds it later (another process, or one that
 * must know its address before it starts). It is drawn below the ephemeral range: a port from
 * inside it could be handed to some outgoing connection of the suite's other files between this
 * probe and the bind, and the server would never listen. Whoever binds it should still retry on a
 * port taken in between.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOW - 1 - Math.floor(Math.random() * (LOW - 10_000));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 below ${LOW} after 50 tries`);
}
