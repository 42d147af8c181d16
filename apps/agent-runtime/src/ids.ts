import { randomBytes } from "node:crypto";

let lastTime = 0;
let counter = 0;

/** Prefixed, time-sortable ids (`run_…`, `thr_…`, `msg_…`): readable in logs and ordered by creation. */
export function newId(prefix: string): string {
  const now = Date.now();
  counter = now === lastTime ? counter + 1 : 0;
  lastTime = now;
  const time = now.toString(36).padStart(9, "0");
  const seq = counter.toString(36).padStart(3, "0");
  return `${prefix}_${time}${seq}${randomBytes(5).toString("hex")}`;
}

export function nowIso(): string {
  return new Date().toISOString();
}
