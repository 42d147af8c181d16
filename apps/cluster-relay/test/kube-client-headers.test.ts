import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../src/kube.ts";
import { type KubeStandIn, loadKubeConfigFor, startKubeStandIn } from "./fixtures/kube-stand-in.ts";

describe("what the relay sends the API server", () => {
  let kube: KubeStandIn;
  beforeAll(async () => {
    kube = await startKubeStandIn();
  });
  afterAll(() => kube.close());

  it("acts as its own service account: Impersonate-* and X-Remote-* headers never reach the API server", async () => {
    const client = new KubeClient(loadKubeConfigFor(kube));
    const { response } = await client.request({
      method: "GET",
      path: "/api/v1/namespaces/default/configmaps",
      headers: {
        "impersonate-user": "system:admin",
        "impersonate-group": "system:masters",
        "impersonate-uid": "0",
        "impersonate-extra-scopes": "all",
        // What an authenticating proxy asserts (the API server's request-header authentication).
        "x-remote-user": "system:admin",
        "x-remote-group": "system:masters",
        "x-remote-extra-scopes": "all",
        accept: "application/json",
      },
      body: new Uint8Array(),
    });
    response.resume();
    expect(response.statusCode).toBe(200);
    const seen = kube.requests.at(-1);
    expect(seen).toMatchObject({ path: "/api/v1/namespaces/default/configmaps", authorized: true });
    expect(seen?.impersonation).toBeUndefined();
  });
});
