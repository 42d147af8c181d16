import { describe, expect, it } from "vitest";
import type { ProviderSettings } from "../src/config.ts";
import { parseLlmPath, resolveUpstream } from "../src/proxy/target.ts";

const installation: ProviderSettings = {
  cloudARegion: "us-east-1",
  cloudA: { kind: "bearer", token: "installation-token" },
  cloudBKey: "installation-key",
  cloudBBaseUrl: "http://127.0.0.1:9/anthropic/v1",
};
const MESSAGES = "/v1/llm/cloud-b/family-1/anthropic/v1/messages";

describe("targets and upstreams reused across calls", () => {
  it("a path that is refused is refused every time, also after a good one was parsed", () => {
    expect(parseLlmPath(MESSAGES)).toEqual({ provider: "cloud-b", family: "family-1", tail: "anthropic/v1/messages" });
    for (let i = 0; i < 2; i++) {
      expect(() => parseLlmPath("/v1/llm/cloud-b/family-1/anthropic/%2e%2e/admin")).toThrow(/Dot segments/);
      expect(() => parseLlmPath("/v1/llm/cloud-z/messages")).toThrow(/Unknown provider/);
    }
  });

  it("a project id that is not valid percent-encoding is a bad request, not an internal error", () => {
    expect(() => parseLlmPath("/v1/projects/%E0%A4%A/llm/cloud-b/family-1/anthropic/v1/messages")).toThrow(
      expect.objectContaining({ slug: "bad-request", message: expect.stringMatching(/percent-encoding/) }),
    );
  });

  it("the query, the route and the provider settings each lead to their own upstream", () => {
    const target = parseLlmPath(MESSAGES);
    const plain = resolveUpstream(target, "", installation);
    expect(plain.origin).toBe("http://127.0.0.1:9");
    expect(plain.path).toBe("/anthropic/v1/messages");
    expect(plain.auth).toEqual({ kind: "header", name: "x-api-key", value: "installation-key" });
    expect(resolveUpstream(target, "?beta=true", installation).path).toBe("/anthropic/v1/messages?beta=true");
    expect(resolveUpstream(target, "", installation)).toBe(plain);

    // A project credential comes as another settings object: its key, not the installation's.
    const project: ProviderSettings = { ...installation, cloudBKey: "project-key" };
    expect(resolveUpstream(target, "", project).auth).toEqual({
      kind: "header",
      name: "x-api-key",
      value: "project-key",
    });

    const bedrock = resolveUpstream(
      parseLlmPath("/v1/llm/cloud-a/eu-west-1/model/anthropic.claude-x/invoke"),
      "",
      installation,
    );
    expect(bedrock.origin).toBe("https://bedrock-runtime.eu-west-1.amazonaws.com");
    expect(bedrock.modelFromPath).toBe("anthropic.claude-x");
  });
});

describe("the cloud-b resource name", () => {
  const settings = (cloudBResource: string): ProviderSettings => ({
    cloudARegion: "us-east-1",
    cloudBKey: "key",
    cloudBResource,
  });

  it("names the host of the resource", () => {
    expect(resolveUpstream(parseLlmPath(MESSAGES), "", settings("my-resource")).url.href).toBe(
      "https://my-resource.services.ai.azure.com/anthropic/v1/messages",
    );
  });

  it("is refused when it is not one DNS label: every URL character that would leave the host", () => {
    // Credentials stored before the name was checked may hold any of these.
    for (const name of [
      "127.0.0.1:8443/x?",
      "169.254.169.254#",
      "evil.example/",
      "a@evil.example",
      "a.b",
      "a\\b",
      "a%2f",
      "-a",
      "a-",
    ]) {
      const target = parseLlmPath(MESSAGES);
      expect(() => resolveUpstream(target, "", settings(name)), name).toThrow(/not one DNS label/);
    }
  });
});
