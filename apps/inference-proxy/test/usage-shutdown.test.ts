// A call that ends as the control plane shuts down keeps its usage: stored by audit, or left in
// the proxy's outbox for the next start to deliver. All-in-one hands usage to audit in process,
// so this checks that the hand-off gives way to the outbox while both are closing.
import { type Database, openDatabase } from "@agentplane/db";
import { createTestDatabase, requirePostgres, type TestDatabase } from "@agentplane/testkit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

const pg = await requirePostgres();

describe.skipIf(!pg.available)(`usage across a shutdown${pg.reason}`, () => {
  let up: FakeUpstream;
  let own: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    up = await startFakeUpstream();
    own = await createTestDatabase("inference_shutdown");
    database = await openDatabase(own.url);
  });
  afterAll(async () => {
    await database?.close();
    await own?.drop();
    await up?.close();
  });

  it("every call that answered before the shutdown is stored or waiting in the outbox", async () => {
    const h = await startInferencePlatform(
      { cloudBKey: CREDS.cloudBKey, cloudBBaseUrl: `${up.url}/anthropic/v1` },
      {},
      { database },
    );
    const calls = await Promise.all(
      Array.from({ length: 20 }, () =>
        h.call("POST", `/v1/projects/${h.projectId}/llm/cloud-b/family-1/anthropic/v1/messages`, {
          token: h.projectToken,
          body: { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
        }),
      ),
    );
    expect(calls.map((c) => c.status)).toEqual(calls.map(() => 200));
    const requestIds = calls.map((c) => c.headers.get("x-request-id"));
    // Closed while the calls' usage is still being gathered (the proxy waits 20 ms per batch), and
    // the database right after, as the launcher does: nothing may still be on its way to it.
    await h.close();
    await database.close();
    database = await openDatabase(own.url);
    const stored = await sql<{ request_id: string }>`select request_id from audit.usage_records`.execute(
      database.kysely,
    );
    const waiting = await sql<{ request_id: string }>`
      select data->>'requestId' as request_id from inference.event_outbox where topic = 'usage.recorded'`.execute(
      database.kysely,
    );
    const kept = [...stored.rows, ...waiting.rows].map((r) => r.request_id);
    expect(new Set(kept)).toEqual(new Set(requestIds));
  });
});
