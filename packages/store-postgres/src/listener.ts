import pg from "pg";
import type { Logger } from "@cass-memory/core";
import { scrubSecrets } from "./database.js";

/**
 * A dedicated connection LISTENing on the store's change channel, for long-running processes
 * (`cm serve`): every committed write, from any process on any machine, notifies it, so a server
 * can keep what it read until a notification says otherwise instead of asking the database first.
 *
 * While the connection is down (server restart, network drop, an administrator ending the backend)
 * `live` is false and readers fall back to the change counter; it reconnects by itself with a
 * growing delay (RECONNECT_MIN_MS up to RECONNECT_MAX_MS). `epoch` grows at every connect and every
 * drop, so a reader can tell that notifications may have been missed in between. Neither the
 * socket nor the reconnect timer keeps the process alive.
 */

export const LISTENER_APPLICATION_NAME = "cass-memory-listener";
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export interface ChangeListenerOptions {
  url: string;
  channel: string;
  logger: Logger;
  connectTimeoutMs: number;
  /** Called with the payload (the layer's space key) of every notification. */
  onChange(space: string): void;
}

function unrefSocket(client: pg.Client): void {
  const stream = (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream;
  stream?.unref?.();
}

export class ChangeListener {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private delay = RECONNECT_MIN_MS;
  private started = false;
  private closed = false;
  private liveNow = false;
  private epochNow = 0;
  private pid: number | null = null;

  constructor(private readonly options: ChangeListenerOptions) {}

  /** True while LISTEN is in effect: every write committed since then is announced. */
  get live(): boolean {
    return this.liveNow;
  }

  /** Grows at every connect and every drop of the listening connection. */
  get epoch(): number {
    return this.epochNow;
  }

  /** The server process id of the listening connection (null while down). */
  get backendPid(): number | null {
    return this.pid;
  }

  /** Starts listening (once; later calls do nothing). */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: this.options.connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    this.client = client;
    let dropped = false;
    const drop = (error?: unknown): void => {
      if (dropped) return;
      dropped = true;
      if (this.client === client) this.client = null;
      const wasLive = this.liveNow;
      this.liveNow = false;
      this.pid = null;
      if (wasLive) this.epochNow += 1;
      client.removeAllListeners("notification");
      void client.end().catch(() => undefined);
      if (this.closed) return;
      const reason = error === undefined ? "closed" : scrubSecrets(error instanceof Error ? error.message : String(error), this.options.url);
      this.options.logger.debug(`PostgreSQL change listener ${wasLive ? "dropped" : "could not connect"} (${reason}); retrying in ${this.delay} ms`);
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.connect();
      }, this.delay);
      this.timer.unref();
      this.delay = Math.min(this.delay * 2, RECONNECT_MAX_MS);
    };
    client.on("error", (error) => drop(error));
    client.on("end", () => drop());
    client.on("notification", (message) => {
      if (message.channel === this.options.channel) this.options.onChange(message.payload ?? "");
    });
    try {
      await client.connect();
      unrefSocket(client);
      await client.query(`LISTEN ${this.options.channel}`);
      if (this.closed || dropped) {
        void client.end().catch(() => undefined);
        return;
      }
      this.pid = (client as unknown as { processID?: number }).processID ?? null;
      this.delay = RECONNECT_MIN_MS;
      this.epochNow += 1;
      this.liveNow = true;
      this.options.logger.debug("PostgreSQL change listener connected");
    } catch (error) {
      drop(error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.liveNow = false;
    this.epochNow += 1;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    if (client !== null) await client.end().catch(() => undefined);
  }
}
