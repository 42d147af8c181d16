import { existsSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { startCheckpointer } from "../src/db/checkpointer.ts";
import { waitFor } from "./support/runtime.ts";

const walSize = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

describe("WAL checkpointer thread", () => {
  it("keeps the WAL bounded while the main connection never checkpoints, and keeps every commit", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "agent-runtime-wal-")), "agent.db");
    const sqlite = new Database(path);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.exec("create table blob (id integer primary key, data text not null)");
    const checkpointer = startCheckpointer(sqlite, path, { intervalMs: 20, truncateAtPages: 50 });
    try {
      expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
      const insert = sqlite.prepare("insert into blob (data) values (?)");
      // ~800 KiB of rows: well past the 50-page threshold of this test.
      for (let i = 0; i < 200; i++) insert.run("x".repeat(4000));
      expect(walSize(path)).toBeGreaterThan(50 * 4096);
      await waitFor(() => walSize(path) === 0);
      expect(sqlite.prepare("select count(*) as n from blob").get()).toEqual({ n: 200 });
    } finally {
      await checkpointer.close();
      sqlite.close();
    }
    // Reopened from the file alone, every row is there.
    const reopened = new Database(path, { readonly: true });
    expect(reopened.prepare("select count(*) as n from blob").get()).toEqual({ n: 200 });
    reopened.close();
  });

  it("runs its thread only while the database is written: started by a write, stopped when idle", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "agent-runtime-wal-")), "agent.db");
    const sqlite = new Database(path);
    sqlite.pragma("journal_mode = WAL");
    sqlite.exec("create table blob (id integer primary key, data text not null)");
    const checkpointer = startCheckpointer(sqlite, path, { intervalMs: 20, truncateAtPages: 50, idleMs: 3000 });
    try {
      const insert = sqlite.prepare("insert into blob (data) values (?)");
      await new Promise((r) => setTimeout(r, 400));
      expect(checkpointer.running).toBe(false);
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 100; i++) insert.run("x".repeat(4000));
        await waitFor(() => checkpointer.running);
        await waitFor(() => walSize(path) === 0);
        await waitFor(() => !checkpointer.running);
        // Stopped for idleness, not failed: the main connection still never checkpoints.
        expect(sqlite.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
      }
      expect(sqlite.prepare("select count(*) as n from blob").get()).toEqual({ n: 200 });
    } finally {
      await checkpointer.close();
      sqlite.close();
    }
  });
});
