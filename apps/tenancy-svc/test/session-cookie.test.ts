import { type Database, openDatabase } from "@agentplane/db";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startActivated, stopTenancies } from "./fixtures/harness.ts";

/**
 * Behind a load balancer or ingress that ends TLS, the gateway is reached over plain HTTP and says
 * so in `x-forwarded-proto`; the installation's public address is what a browser uses.
 */
describe("the session cookie's Secure flag (PGlite)", () => {
  let database: Database;
  beforeEach(async () => {
    database = await openDatabase("pglite://memory");
  });
  afterEach(async () => {
    await stopTenancies();
    await database.close();
  });

  const cookies = async (publicUrl: string, proto: string) => {
    const h = await startActivated(database, { publicUrl });
    const headers = { "x-forwarded-proto": proto, "x-forwarded-host": "gateway:8080" };
    const opened = await h.call("POST", "/v1/auth/sessions", { as: h.owner, headers });
    expect(opened.status).toBe(201);
    return { opened: opened.headers.get("set-cookie") ?? "" };
  };

  it("is set whenever the installation is published at an https address", async () => {
    const { opened } = await cookies("https://agentplane.example.com", "http");
    // Secure, it is __Host-: no other host (a sibling subdomain) can set one.
    expect(opened).toMatch(/^__Host-agentplane_session=aps_.*; Path=\/; HttpOnly; SameSite=Lax; .*Secure/);
  });

  it("is set when the caller reached the gateway over https, and not over plain http", async () => {
    expect((await cookies("http://platform.test", "https")).opened).toMatch(/; Secure/);
    await stopTenancies();
    expect((await cookies("http://platform.test", "http")).opened).not.toMatch(/Secure/);
    expect((await cookies("http://platform.test", "http")).opened).toMatch(/^agentplane_session=/);
  });
});
