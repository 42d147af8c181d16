import { randomFillSync } from "node:crypto";

let lastTime = 0;
let counter = 0;

const RANDOM_BYTES = 5;
// One CSPRNG call per ~800 ids: a `randomBytes(5)` per id was most of the receiver's own CPU
// time per accepted webhook in a profile (the call's fixed cost dwarfs the 5 bytes).
const pool = Buffer.alloc(RANDOM_BYTES * 819);
let poolOffset = pool.length;

function randomHex(): string {
  if (poolOffset + RANDOM_BYTES > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString("hex", poolOffset, poolOffset + RANDOM_BYTES);
  poolOffset += RANDOM_BYTES;
  return hex;
}

/** Prefixed, time-sortable ids (`run_…`, `thr_…`, `msg_…`): readable in logs and ordered by creation. */
export function newId(prefix: string): string {
  const now = Date.now();
  counter = now === lastTime ? counter + 1 : 0;
  lastTime = now;
  const time = now.toString(36).padStart(9, "0");
  const seq = counter.toString(36).padStart(3, "0");
  return `${prefix}_${time}${seq}${randomHex()}`;
}

export function nowIso(): string {
  return new Date().toISOString();
}
