import { OqlError } from '../../diagnostics/diagnostic.js';

/**
 * Fair admission to a shared set of connections: each tenant may hold at most `perTenant` of them
 * at once; its further calls wait in its own line (first come, first served) until one of its own
 * calls ends, which hands its place straight to the next in line. Other tenants never wait behind
 * that line, so one organization cannot hold the whole pool. A call that waits longer than
 * `maxWaitMs` is refused with 429 and Retry-After: its organization is saturating its own share.
 */
export class TenantGate {
  private readonly held = new Map<string, number>();
  private readonly lines = new Map<string, Array<(release: () => void) => void>>();

  constructor(readonly perTenant: number, readonly maxWaitMs: number) {}

  /** Waits for one of the tenant's places, at most `maxWaitMs` (default: the gate's) before a 429. */
  enter(tenant: string | undefined, maxWaitMs = this.maxWaitMs): Promise<() => void> {
    if (tenant === undefined) return Promise.resolve(() => {});
    if ((this.held.get(tenant) ?? 0) < this.perTenant) {
      this.held.set(tenant, (this.held.get(tenant) ?? 0) + 1);
      return Promise.resolve(this.releaser(tenant));
    }
    return new Promise((resolve, reject) => {
      const line = this.lines.get(tenant) ?? [];
      this.lines.set(tenant, line);
      const wake = (release: () => void): void => {
        clearTimeout(timer);
        resolve(release);
      };
      const timer = setTimeout(() => {
        const at = line.indexOf(wake);
        if (at >= 0) line.splice(at, 1);
        if (line.length === 0) this.lines.delete(tenant);
        reject(OqlError.retryLater('TOO_MANY_REQUESTS', "your organization is using its whole share of the database's connections; retry later",
          Math.max(1, Math.ceil(maxWaitMs / 1000)), "run fewer requests at once across your organization's keys"));
      }, Math.min(maxWaitMs, this.maxWaitMs));
      timer.unref?.();
      line.push(wake);
    });
  }

  /** Connections `tenant` holds now. */
  holding(tenant: string): number {
    return this.held.get(tenant) ?? 0;
  }

  /** Calls of `tenant` waiting for one of its connections. */
  waiting(tenant: string): number {
    return this.lines.get(tenant)?.length ?? 0;
  }

  private releaser(tenant: string): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const line = this.lines.get(tenant);
      const next = line?.shift();
      if (line && line.length === 0) this.lines.delete(tenant);
      // The place passes to the next call in this tenant's line without ever being free to another.
      if (next) return next(this.releaser(tenant));
      const left = (this.held.get(tenant) ?? 1) - 1;
      if (left <= 0) this.held.delete(tenant);
      else this.held.set(tenant, left);
    };
  }
}
