import type { ChildProcess } from "node:child_process";
import type { Browser } from "playwright-core";

export declare const REPO: string;
export declare const CM: string;

export declare function chromiumPath(): string | null;
export declare function browserAvailability(): { run: boolean; reason?: string };
export declare function launchChromium(userDataRoot: string): Promise<{ browser: Browser; close: () => Promise<void> }>;

export interface Home {
  home: string;
  env: NodeJS.ProcessEnv;
  cleanup: () => void;
}
export declare function tempHome(): Home;
export declare function cm(h: Home, args: string[], extraEnv?: Record<string, string>, input?: string): any;

export interface Seed {
  runId: string;
  ids: Record<"lint" | "lintDup" | "typecheck" | "timersYes" | "timersNo" | "expiring" | "harmful" | "risky", string>;
  task: string;
  /** Ids `cm context` returned for `task` (rules and anti-patterns). */
  returned: string[];
  markedAfterTask: string;
}
export declare function seed(h: Home, options?: { reflect?: boolean }): Seed;
export declare function allBullets(h: Home): Array<Record<string, any>>;
export declare function getBullet(h: Home, id: string): Record<string, any>;

export interface Dashboard {
  url: string;
  origin: string;
  token: string;
  child: ChildProcess;
  stop: () => Promise<void>;
}
export declare function startDashboard(h: Home, extraArgs?: string[]): Promise<Dashboard>;
/** `cm serve` on a free loopback port; the dashboard at /dashboard/ (with `#token=` when a token is given). */
export declare function startServe(h: Home, token?: string): Promise<Dashboard>;
