import { createHmac, randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { Migrator } from "kysely/migration";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { migrations } from "../src/db/migrations/index.ts";
import { createRuntime } from "../src/runtime.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { fakeModelEnv, startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";

const SECRET = "gh-secret-that-must-not-be-on-disk-7f3a";
const LEGACY = "legacy-plaintext-secret-9c21";

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

/** Every byte the database has on disk: the file, its WAL and shared memory. */
function rawDatabase(home: string): string {
  return ["agent.db", "agent.db-wal", "agent.db-shm"]
    .map((f) => join(home, f))
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f).toString("latin1"))
    .join("\n");
}

const signed = (secret: string, body: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

async function deliver(rt: TestRuntime, name: string, secret: string, id: string) {
  const body = JSON.stringify({ ref: "refs/heads/main", id });
  const res = await rt.request("POST", `/agents/webhooks/${name}`, body, {
    "content-type": "application/json",
    "x-github-event": "push",
    "x-github-delivery": id,
    "x-hub-signature-256": signed(secret, body),
  });
  return res.status;
}

describe("webhook verification secrets at rest", () => {
  it("stores the secret sealed with a key generated into the data dir, and verifies with it after a restart", async () => {
    const home = tempHome();
    let rt = await startTestRuntime(fake, { home });
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    const created = await rt.json("POST", "/agents/webhook-subscriptions", {
      name: "gh",
      deliverOnly: true,
      prompt: "pushed",
      verification: { kind: "github", secret: SECRET },
    });
    expect(created.status).toBe(201);
    expect(await deliver(rt, "gh", SECRET, "d-1")).toBe(200);
    await rt.close();

    const keyFile = join(home, "secret.key");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(keyFile, "utf8").trim(), "base64")).toHaveLength(32);
    const raw = rawDatabase(home);
    expect(raw).toContain("gh");
    expect(raw).not.toContain(SECRET);
    const sqlite = new Database(join(home, "agent.db"), { readonly: true });
    const row = sqlite
      .prepare("SELECT verification_secret, verification_secret_sealed FROM webhook_subscription WHERE name = 'gh'")
      .get() as { verification_secret: string; verification_secret_sealed: number };
    sqlite.close();
    expect(row.verification_secret_sealed).toBe(1);
    expect(row.verification_secret).toMatch(/^v1:[^:]+:[^:]+:[^:]+$/);

    rt = await startTestRuntime(fake, { home });
    expect(await deliver(rt, "gh", SECRET, "d-2")).toBe(200);
    expect(await deliver(rt, "gh", "not-the-secret", "d-3")).toBe(401);
    await rt.close();
  });

  it("seals plaintext secrets stored before migration 0008, and refuses to start with another key", async () => {
    const home = tempHome();
    const key = randomBytes(32).toString("base64");
    // A database as it was at 0007: the secret column in plain text.
    const sqlite = new Database(join(home, "agent.db"));
    // biome-ignore lint/suspicious/noExplicitAny: the schema as it was at 0007
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) });
    const to0007 = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(
      "0007-webhook-verification",
    );
    expect(to0007.error).toBeUndefined();
    sqlite
      .prepare(
        `INSERT INTO webhook_subscription (name, description, events, deliver_to, deliver_only, prompt, active,
           verification_kind, verification_secret, created_at, updated_at)
         VALUES ('legacy', '', '*', 'Chat', 1, 'pushed', 1, 'github', ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
      )
      .run(LEGACY);
    await db.destroy();
    expect(rawDatabase(home)).toContain(LEGACY);

    let rt = await startTestRuntime(fake, { home, env: { AGENT_SECRET_KEY: key } });
    await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
    expect(await deliver(rt, "legacy", LEGACY, "d-1")).toBe(200);
    await rt.close();
    expect(rawDatabase(home)).not.toContain(LEGACY);
    // With AGENT_SECRET_KEY set, no key file is written.
    expect(existsSync(join(home, "secret.key"))).toBe(false);

    // Another key cannot open what is stored: the start fails, naming the variable.
    const other = loadConfig({ ...fakeModelEnv(fake, home), AGENT_SECRET_KEY: randomBytes(32).toString("base64") });
    const refused = await createRuntime(other).then(
      (runtime) => runtime.close().then(() => undefined),
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).variable).toBe("AGENT_SECRET_KEY");
    // The right key still opens it (nothing was changed by the refused start).
    rt = await startTestRuntime(fake, { home, env: { AGENT_SECRET_KEY: key } });
    expect(await deliver(rt, "legacy", LEGACY, "d-2")).toBe(200);
    await rt.close();
  });

  it("refuses a key that is not 32 bytes of base64 before anything starts", () => {
    for (const bad of ["short", randomBytes(16).toString("base64"), `${randomBytes(32).toString("base64")}!`]) {
      expect(() => loadConfig({ ...fakeModelEnv(fake, tempHome()), AGENT_SECRET_KEY: bad })).toThrow(
        /AGENT_SECRET_KEY: must be 32 bytes, base64/,
      );
    }
  });
});
