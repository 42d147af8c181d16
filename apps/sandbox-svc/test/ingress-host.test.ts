import { ingressHeaderValue, parseIngressHost } from "@agentplane/contracts";
import { describe, expect, it } from "vitest";

describe("ingress host names", () => {
  it("maps <slug> and <port>-<slug> under the ingress host, with or without a port", () => {
    expect(parseIngressHost("web-1.sbx.example.com", "sbx.example.com")).toEqual({ slug: "web-1" });
    expect(parseIngressHost("8080-web-1.SBX.example.com:443", "sbx.example.com")).toEqual({
      slug: "web-1",
      port: 8080,
    });
    expect(ingressHeaderValue({ slug: "web-1", port: 8080 })).toBe("web-1:8080");
    expect(ingressHeaderValue({ slug: "web-1" })).toBe("web-1");
  });

  it("ignores the API host, deeper names and look-alike suffixes", () => {
    expect(parseIngressHost("sbx.example.com", "sbx.example.com")).toBeUndefined();
    expect(parseIngressHost("a.b.sbx.example.com", "sbx.example.com")).toBeUndefined();
    expect(parseIngressHost("web.evilsbx.example.com", "sbx.example.com")).toBeUndefined();
    expect(parseIngressHost("api.example.com", "sbx.example.com")).toBeUndefined();
  });
});
