import { ConfigError, parseEnv } from "@agentplane/service-kit";
import { describe, expect, it } from "vitest";
import {
  configFromEnv,
  configFromSettings,
  oidcSignInGap,
  TenancyEnvSchema,
  TenancySettingsSchema,
} from "../src/config.ts";

const secretKey = new Uint8Array(32);

describe("tenancy settings, one reading for the deployable and the all-in-one launcher", () => {
  it("passes every OIDC sign-in setting through, the redirect URI included", () => {
    const env = TenancySettingsSchema.parse({
      OIDC_ISSUER: "https://idp.example.com",
      OIDC_CLIENT_ID: "agentplane",
      OIDC_CLIENT_SECRET: "s3cret",
      OIDC_REDIRECT_URI: "https://cp.example.com/activate/callback",
      OIDC_EMAIL_TRUST: "present",
    });
    expect(configFromSettings(env, { secretKey }).oidc).toEqual({
      issuer: "https://idp.example.com",
      clientId: "agentplane",
      clientSecret: "s3cret",
      redirectUri: "https://cp.example.com/activate/callback",
      emailTrust: "present",
    });
    expect(oidcSignInGap(env)).toBeUndefined();
  });

  it("takes only verified emails unless OIDC_EMAIL_TRUST says otherwise", () => {
    const env = { OIDC_ISSUER: "https://idp.example.com", OIDC_CLIENT_ID: "agentplane" };
    expect(configFromEnv(env, { secretKey }).oidc?.emailTrust).toBe("verified");
  });

  it("refuses to start on an unknown OIDC_EMAIL_TRUST, naming the variable and the allowed values", () => {
    const env = {
      OIDC_ISSUER: "https://idp.example.com",
      OIDC_CLIENT_ID: "agentplane",
      OIDC_EMAIL_TRUST: "always",
      AGENTPLANE_SECRET_KEY: Buffer.alloc(32).toString("base64"),
      INTERNAL_IDENTITY_PUBLIC_KEY: "{}",
      DATABASE_URL: "pglite://memory",
    };
    for (const read of [() => configFromEnv(env, { secretKey }), () => parseEnv(TenancyEnvSchema, env)]) {
      let error: unknown;
      try {
        read();
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variables).toEqual(["OIDC_EMAIL_TRUST"]);
      expect((error as Error).message).toMatch(/OIDC_EMAIL_TRUST: .*verified.*present/);
    }
  });

  it("names the missing client id when an issuer is set without one", () => {
    const env = TenancySettingsSchema.parse({ OIDC_ISSUER: "https://idp.example.com" });
    expect(configFromSettings(env, { secretKey }).oidc).toBeUndefined();
    expect(oidcSignInGap(env)).toMatch(/OIDC_CLIENT_ID/);
  });

  it("builds links from the caller's address only when no public URL is known", () => {
    const bare = TenancySettingsSchema.parse({});
    expect(configFromSettings(bare, { secretKey })).toMatchObject({ publicUrlFromRequest: true });
    expect(configFromSettings(bare, { secretKey, publicUrl: "http://localhost:9090" })).toMatchObject({
      publicUrl: "http://localhost:9090",
    });
    expect(
      configFromSettings(bare, { secretKey, publicUrl: "http://localhost:9090" }).publicUrlFromRequest,
    ).toBeUndefined();
    const set = TenancySettingsSchema.parse({ PUBLIC_URL: "https://cp.example.com" });
    expect(configFromSettings(set, { secretKey, publicUrl: "http://localhost:9090" }).publicUrl).toBe(
      "https://cp.example.com",
    );
  });

  it("rejects a bootstrap token shorter than 32 characters", () => {
    expect(TenancySettingsSchema.safeParse({ AGENTPLANE_BOOTSTRAP_TOKEN: "short" }).success).toBe(false);
  });
});
