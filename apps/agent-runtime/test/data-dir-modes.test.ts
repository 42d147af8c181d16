import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime | undefined;
let umask: number;

beforeAll(async () => {
  fake = await startFakeModel();
  // A permissive umask: without explicit modes, files would be 0666 and directories 0777.
  umask = process.umask(0o000);
});
afterAll(async () => {
  process.umask(umask);
  await fake.close();
});
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("the data directory and the database files", () => {
  it("are owner-only even when AGENT_DATA_DIR already exists open to others", async () => {
    const dataDir = join(tempHome(), "data");
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    rt = await startTestRuntime(fake, { env: { AGENT_DATA_DIR: dataDir } });
    // A write, so that the WAL and its index exist.
    const res = await rt.json("POST", "/agents/threads", { title: "t" });
    expect(res.status).toBeLessThan(300);
    const db = join(dataDir, "agent.db");
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(db)).toBe(0o600);
    expect(existsSync(`${db}-wal`)).toBe(true);
    expect(modeOf(`${db}-wal`)).toBe(0o600);
    expect(modeOf(`${db}-shm`)).toBe(0o600);
  });

  it("closes database files an earlier start left readable by others", async () => {
    const dataDir = join(tempHome(), "data");
    mkdirSync(dataDir, { mode: 0o755 });
    const db = join(dataDir, "agent.db");
    rt = await startTestRuntime(fake, { env: { AGENT_DATA_DIR: dataDir } });
    await rt.close();
    rt = undefined;
    for (const file of [db, `${db}-wal`, `${db}-shm`]) {
      if (!existsSync(file)) writeFileSync(file, "");
      chmodSync(file, 0o644);
    }
    rt = await startTestRuntime(fake, { env: { AGENT_DATA_DIR: dataDir } });
    for (const file of [db, `${db}-wal`, `${db}-shm`]) expect(modeOf(file)).toBe(0o600);
  });
});
