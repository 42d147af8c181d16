// The relay sends its tunnel token to the control plane and trusts the keys it reads there: over
// plain http to another machine anyone on the way could take the token, or hand the relay keys of
// their own and have their requests run in the cluster.
import { describe, expect, it } from "vitest";
import { parseRelayEnv } from "../src/config.ts";

const base = { CLUSTER_ID: "cl_1", TUNNEL_TOKEN_FILE: "/run/token" };

describe("the relay's control plane address", () => {
  it.each(["https://agentplane.example.com", "http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080"])(
    "takes %s",
    (url) => {
      expect(parseRelayEnv({ ...base, AGENTPLANE_URL: url }).AGENTPLANE_URL).toBe(url);
    },
  );

  it.each([
    "http://agentplane.example.com",
    "http://10.0.0.5:8080",
    "http://agentplane-gateway.agentplane.svc:8080",
    // Browsers keep *.localhost on this machine; the relay's resolver asks DNS for it like any name.
    "http://agentplane.localhost:8080",
  ])("refuses plain http to another machine: %s", (url) => {
    expect(() => parseRelayEnv({ ...base, AGENTPLANE_URL: url })).toThrow(
      /AGENTPLANE_URL: .*plain http.*AGENTPLANE_INSECURE_HTTP=1/,
    );
  });

  it("takes plain http to another machine when told the network is trusted", () => {
    const url = "http://agentplane-gateway.agentplane.svc:8080";
    const env = parseRelayEnv({ ...base, AGENTPLANE_URL: url, AGENTPLANE_INSECURE_HTTP: "1" });
    expect(env.AGENTPLANE_URL).toBe(url);
  });

  it("reads AGENTPLANE_INSECURE_HTTP as an on/off setting, refusing anything else", () => {
    const url = "http://agentplane-gateway.agentplane.svc:8080";
    expect(parseRelayEnv({ ...base, AGENTPLANE_URL: url, AGENTPLANE_INSECURE_HTTP: "yes" }).AGENTPLANE_URL).toBe(url);
    expect(() => parseRelayEnv({ ...base, AGENTPLANE_URL: url, AGENTPLANE_INSECURE_HTTP: "0" })).toThrow(/plain http/);
    expect(() => parseRelayEnv({ ...base, AGENTPLANE_URL: url, AGENTPLANE_INSECURE_HTTP: "maybe" })).toThrow(
      /AGENTPLANE_INSECURE_HTTP/,
    );
  });

  it("refuses a scheme other than http and https", () => {
    expect(() => parseRelayEnv({ ...base, AGENTPLANE_URL: "ftp://agentplane.example.com" })).toThrow(/AGENTPLANE_URL/);
  });
});
