import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PAGE_CEDAR_BYTES } from "../src/services/page-size.ts";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;

// 100 statements of about 2.5 KB: a body of about 250 KB.
const large = (tag: string) =>
  Array.from(
    { length: 100 },
    (_, i) =>
      `@id("r${i}") forbid(principal, action == Action::"sandbox:exec", resource) when { context.command == "${tag}-${i}${"x".repeat(2400)}" };`,
  ).join("\n");

type Page = { items: { id?: string; version: number; cedar: string }[]; nextCursor?: string };

// A page of 200 policies of 256 KiB each was 51 MB, read and serialized for one request.
describe.skipIf(!target.available)(`pages of policies and versions on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let projectId: string;
  let policyId: string;

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    projectId = await h.project("pages");
    for (let i = 0; i < 5; i++) {
      const res = await h.call("POST", `/v1/projects/${projectId}/policies`, {
        as: h.owner,
        body: { name: `large-${i}`, cedar: large(`p${i}`) },
      });
      expect(res.status).toBe(201);
      policyId = (await json<{ id: string }>(res)).id;
    }
    for (let v = 2; v <= 5; v++) {
      const res = await h.call("PATCH", `/v1/projects/${projectId}/policies/${policyId}`, {
        as: h.owner,
        body: { cedar: large(`v${v}`) },
      });
      expect(res.status).toBe(200);
    }
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const walk = async (path: string) => {
    const pages: Page[] = [];
    let cursor: string | undefined;
    do {
      const res = await h.call("GET", `${path}?limit=200${cursor ? `&cursor=${cursor}` : ""}`, { as: h.owner });
      expect(res.status).toBe(200);
      const page = await json<Page>(res);
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor);
    return pages;
  };
  const bytes = (page: Page) => page.items.reduce((n, i) => n + Buffer.byteLength(i.cedar), 0);

  it("stops a page of policies at the Cedar it may carry, and pages on to every one", async () => {
    const pages = await walk(`/v1/projects/${projectId}/policies`);
    expect(pages.map((p) => p.items.length)).toEqual([4, 1]);
    for (const page of pages) expect(bytes(page)).toBeLessThanOrEqual(MAX_PAGE_CEDAR_BYTES);
    expect(new Set(pages.flatMap((p) => p.items.map((i) => i.id))).size).toBe(5);
  });

  it("and a page of versions", async () => {
    const pages = await walk(`/v1/projects/${projectId}/policies/${policyId}/versions`);
    expect(pages.map((p) => p.items.map((i) => i.version))).toEqual([[5, 4, 3, 2], [1]]);
    for (const page of pages) expect(bytes(page)).toBeLessThanOrEqual(MAX_PAGE_CEDAR_BYTES);
  });

  it("answers a version number past any version with a 404, and a cursor past them with every version", async () => {
    for (const version of ["2147483648", "99999999999999"]) {
      const res = await h.call("GET", `/v1/projects/${projectId}/policies/${policyId}/versions/${version}`, {
        as: h.owner,
      });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
    const res = await h.call(
      "GET",
      `/v1/projects/${projectId}/policies/${policyId}/versions?limit=2&cursor=99999999999999999999`,
      {
        as: h.owner,
      },
    );
    expect(res.status).toBe(200);
    expect((await json<Page>(res)).items.map((i) => i.version)).toEqual([5, 4]);
  });
});
