import { parseIngressHost, SandboxSchema } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox } from "../src/services/create.ts";
import { toSandbox } from "../src/services/mapping.ts";
import { getSandboxRow } from "../src/services/sandboxes.ts";
import { type VerbFixture, verbFixture } from "./service-fixture.ts";

const P = "prj_urls";

describe("the address of each exposed port in the API's sandbox", () => {
  let database: Database;
  let fx: VerbFixture;
  let id: string;

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    fx = await verbFixture(database);
    id = (
      await createSandbox(fx.deps, fx.actor, {
        projectId: P,
        name: "Web",
        slug: "web-urls",
        labels: {},
        start: false,
        ports: [
          { port: 8080, visibility: "public" },
          { port: 9000, visibility: "private" },
        ],
      })
    ).id;
  });
  afterAll(async () => {
    await fx?.close();
    await database?.close();
  });

  it("names every port as https://<port>-<slug>.<ingress host> when a host is configured", async () => {
    const sandbox = SandboxSchema.parse(toSandbox(await getSandboxRow(fx.deps, P, id), "SBX.Example.com"));
    expect(sandbox.ports).toEqual([
      { port: 8080, visibility: "public", url: "https://8080-web-urls.sbx.example.com" },
      { port: 9000, visibility: "private", url: "https://9000-web-urls.sbx.example.com" },
    ]);
    // The ingress routes each address to its own port, the first one included.
    for (const p of sandbox.ports) {
      expect(parseIngressHost(new URL(p.url as string).host, "sbx.example.com")).toEqual({
        slug: "web-urls",
        port: p.port,
      });
    }
  });

  it("answers null, not a made-up address, without an ingress host", async () => {
    const sandbox = SandboxSchema.parse(toSandbox(await getSandboxRow(fx.deps, P, id), undefined));
    expect(sandbox.ports).toEqual([
      { port: 8080, visibility: "public", url: null },
      { port: 9000, visibility: "private", url: null },
    ]);
  });
});
