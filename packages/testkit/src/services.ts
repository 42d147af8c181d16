import { randomBytes } from "node:crypto";
import { Socket } from "node:net";
import postgres from "postgres";

export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

function reachable(url: string, timeoutMs = 1500): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("error", () => done(false));
    socket.connect(Number(port), hostname.replace(/^\[|\]$/g, ""), () => done(true));
  });
}

export interface ServiceAvailability {
  available: boolean;
  /** Text for `describe.skipIf(...)` names: why a suite was skipped. */
  reason: string;
}

/**
 * Checks that a service a suite needs is reachable. Outside CI an absent service skips the suite
 * (with the reason in its name); with CI=true it throws, so a missing service fails the run.
 */
async function require(kind: "Postgres" | "Redis", url: string): Promise<ServiceAvailability> {
  const available = await reachable(url);
  if (!available && process.env.CI === "true") {
    throw new Error(`${kind} is required in CI but not reachable at ${new URL(url).host}`);
  }
  return { available, reason: available ? "" : ` (skipped: ${kind} not reachable at ${new URL(url).host})` };
}

export function requirePostgres(): Promise<ServiceAvailability> {
  return require("Postgres", TEST_POSTGRES_URL);
}

export function requireRedis(): Promise<ServiceAvailability> {
  return require("Redis", TEST_REDIS_URL);
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database for one suite on the test Postgres server. */
export async function createTestDatabase(prefix = "t"): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => dropTestDatabase(name) };
}

/** Drops a database of the test server (one a test let the code under test create). */
export async function dropTestDatabase(name: string): Promise<void> {
  const sql = postgres(TEST_POSTGRES_URL, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP DATABASE IF EXISTS "${name.replaceAll('"', '""')}" WITH (FORCE)`);
  } finally {
    await sql.end();
  }
}

/** A key prefix so suites sharing one Redis do not see each other's keys. */
export function testRedisPrefix(label = "t"): string {
  return `test:${label}:${randomBytes(4).toString("hex")}`;
}
