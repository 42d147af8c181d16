import type { Sandbox, SandboxRevision } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiFixture, apiFixture } from "./api-fixture.ts";

describe("revision authors over the API", () => {
  let fx: ApiFixture;
  beforeAll(async () => {
    fx = await apiFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  it("names each revision's author as the principal was named when it wrote it", async () => {
    const token = fx.as({ type: "api_token", id: "tok_ci", displayName: "ci", userId: "usr_owner" });
    const person = fx.as({ type: "user", id: "usr_ada", displayName: "Ada Lovelace" });
    const unnamed = fx.as({ type: "user", id: "usr_anon" });
    const base = "/v1/projects/prj_api/sandboxes";
    const box = await token<Sandbox>("POST", base, { name: "box" });
    await person("PATCH", `${base}/${box.id}`, { env: { MODE: "debug" }, reason: "debug logging" });
    await unnamed("PATCH", `${base}/${box.id}`, { env: { MODE: "quiet" } });
    // Anyone reading the revisions sees the names, whether or not it may read the token or member.
    const reader = fx.as({ type: "api_token", id: "tok_viewer", displayName: "auditor" });
    const { items } = await reader<{ items: SandboxRevision[] }>("GET", `${base}/${box.id}/revisions`);
    expect(items.map((r) => [r.revision, r.author])).toEqual([
      [3, { type: "user", id: "usr_anon" }],
      [2, { type: "user", id: "usr_ada", name: "Ada Lovelace" }],
      [1, { type: "api_token", id: "tok_ci", name: "ci" }],
    ]);
  });
});
