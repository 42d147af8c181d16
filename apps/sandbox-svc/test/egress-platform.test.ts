import { describe, expect, it } from "vitest";
import { platformDestination } from "../src/egress/platform.ts";

describe("the platform as a destination of the egress proxy", () => {
  it("renames a loopback address, which a sandbox cannot see, and dials loopback for it", () => {
    expect(platformDestination("http://localhost:8080")).toEqual({
      host: "agentplane.internal",
      port: 8080,
      dial: { host: "127.0.0.1", port: 8080 },
      sandboxUrl: "http://agentplane.internal:8080",
    });
    expect(platformDestination("http://127.0.0.2:9000/").dial).toEqual({ host: "127.0.0.2", port: 9000 });
    expect(platformDestination("http://[::1]:9000").dial).toEqual({ host: "::1", port: 9000 });
  });

  it("keeps any other address as configured, with the scheme's default port", () => {
    expect(platformDestination("https://Agentplane.Example.com")).toEqual({
      host: "agentplane.example.com",
      port: 443,
      dial: { host: "agentplane.example.com", port: 443 },
      sandboxUrl: "https://agentplane.example.com",
    });
    expect(platformDestination("http://gateway.agentplane.svc:8080/base").sandboxUrl).toBe(
      "http://gateway.agentplane.svc:8080/base",
    );
  });
});
