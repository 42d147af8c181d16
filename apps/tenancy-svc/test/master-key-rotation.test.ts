import { randomBytes } from "node:crypto";
import { CLUSTER_JWT_AUDIENCE } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import { databaseTargets } from "@agentplane/db/testing";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { open } from "../src/crypto/secret-box.ts";
import { signingKeyContext } from "../src/keys/signing-keys.ts";
import { deviceTokenContext } from "../src/services/device-auth.ts";
import { signClusterJwt } from "./fixtures/cluster-jwt.ts";
import {
  BOOTSTRAP_TOKEN,
  type Harness,
  json,
  startActivated,
  startTenancy,
  stopTenancies,
} from "./fixtures/harness.ts";

const targets = await databaseTargets();

// The master key rotation: everything tenancy sealed under key A is re-sealed under B when it
// starts with B as AGENTPLANE_SECRET_KEY and A as AGENTPLANE_SECRET_KEY_PREVIOUS, so a later start
// with B alone loses nothing.
describe.each(targets)("master key rotation on $name", (target) => {
  describe.skipIf(!target.available)(`tenancy's sealed secrets${target.reason}`, () => {
    const A = randomBytes(32);
    const B = randomBytes(32);
    let database: Database;
    let cleanup: () => Promise<void>;
    let first: Awaited<ReturnType<typeof startActivated>>;
    const projectIds: string[] = [];
    let deviceCode: string;
    let invitation: { id: string; token: string };

    const sealedRows = async () => ({
      signingKeys: await database.kysely
        .withSchema("tenancy")
        .selectFrom("signing_keys")
        .select(["id", "private_key_enc"])
        .orderBy("id")
        .execute(),
      deviceTokens: await database.kysely
        .withSchema("tenancy")
        .selectFrom("device_authorizations")
        .select(["id", "token_enc"])
        .where("token_enc", "is not", null)
        .execute(),
    });
    let underA: Awaited<ReturnType<typeof sealedRows>>;

    beforeAll(async () => {
      const opened = await target.open();
      database = opened.database;
      cleanup = opened.cleanup;
      first = await startActivated(database, {}, { secretKey: A });
      for (const name of ["alpha", "beta"]) {
        const res = await first.call("POST", `/v1/orgs/${first.orgId}/projects`, { as: first.owner, body: { name } });
        projectIds.push((await json<{ id: string }>(res)).id);
      }
      // One project with a rotated-out key as well as its current one.
      expect((await first.call("POST", `/v1/projects/${projectIds[0]}/rotate-keys`, { as: first.owner })).status).toBe(
        200,
      );
      // A device sign-in approved but not collected yet: its token waits sealed.
      const started = await json<{ deviceCode: string; userCode: string }>(
        await first.call("POST", "/v1/auth/device", { body: { clientName: "cli" } }),
      );
      deviceCode = started.deviceCode;
      const approved = await first.call("POST", "/device", {
        body: new URLSearchParams({
          userCode: started.userCode,
          decision: "approve",
          token: BOOTSTRAP_TOKEN,
        }).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://platform.test" },
      });
      expect(approved.status).toBe(200);
      const created = await json<{ id: string; acceptUrl: string }>(
        await first.call("POST", `/v1/orgs/${first.orgId}/invitations`, {
          as: first.owner,
          body: { email: "late@a.test", role: "member" },
        }),
      );
      invitation = { id: created.id, token: new URL(created.acceptUrl).hash.replace(/^#token=/, "") };
      underA = await sealedRows();
      expect(underA.signingKeys).toHaveLength(3);
      expect(underA.deviceTokens).toHaveLength(1);
      await stopTenancies();
    });
    afterAll(async () => {
      await stopTenancies();
      await cleanup?.();
    });

    const verifies = async (h: Harness, projectId: string) => {
      const token = await signClusterJwt(h.service, projectId, "cl_rotation");
      const jwks = await json<JSONWebKeySet>(
        await h.call("GET", `/v1/projects/${projectId}/.well-known/jwks.json`, { as: first.owner }),
      );
      const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { audience: CLUSTER_JWT_AUDIENCE });
      return payload.sub;
    };
    const preview = (h: Harness) =>
      h.call("POST", `/v1/invitations/${invitation.id}/preview`, { body: { token: invitation.token } });

    it("a start with the new key current and the old one previous re-seals every row under the new key", async () => {
      const rotating = await startTenancy(database, { previousSecretKey: A }, { secretKey: B });
      const underB = await sealedRows();
      expect(underB.signingKeys.map((r) => r.id)).toEqual(underA.signingKeys.map((r) => r.id));
      for (const [i, row] of underB.signingKeys.entries()) {
        expect(row.private_key_enc).not.toBe(underA.signingKeys[i]!.private_key_enc);
        expect(open(B, row.private_key_enc, signingKeyContext(row.id)).toString("utf8")).toBe(
          open(A, underA.signingKeys[i]!.private_key_enc, signingKeyContext(row.id)).toString("utf8"),
        );
        expect(() => open(A, row.private_key_enc, signingKeyContext(row.id))).toThrow();
      }
      const [device] = underB.deviceTokens;
      expect(open(B, device!.token_enc!, deviceTokenContext(device!.id)).toString("utf8")).toMatch(/^apl_/);
      // Links sent before the rotation still open while the previous key is configured.
      expect((await preview(rotating)).status).toBe(200);
      await stopTenancies();

      // A second start with both keys finds nothing left to re-seal.
      await startTenancy(database, { previousSecretKey: A }, { secretKey: B });
      expect(await sealedRows()).toEqual(underB);
      await stopTenancies();
    });

    it("then a start with the new key alone signs with every project's key and hands over the waiting token", async () => {
      const h = await startTenancy(database, {}, { secretKey: B });
      for (const projectId of projectIds) expect(await verifies(h, projectId)).toBe("cl_rotation");
      const collected = await h.call("POST", "/v1/auth/device/token", { body: { deviceCode } });
      expect(collected.status).toBe(200);
      const { token } = await json<{ token: string }>(collected);
      expect((await h.principalOf(token)).userId).toBe(first.owner.userId);
      // The previous key is gone, and with it the links made under it.
      expect((await preview(h)).status).toBe(404);
      await stopTenancies();
    });

    it("refuses to start when the previous key is not the one the rows were sealed with", async () => {
      await expect(
        startTenancy(database, { previousSecretKey: randomBytes(32) }, { secretKey: randomBytes(32) }),
      ).rejects.toThrow(
        /project signing key .* opens with neither AGENTPLANE_SECRET_KEY nor AGENTPLANE_SECRET_KEY_PREVIOUS/,
      );
    });
  });
});
