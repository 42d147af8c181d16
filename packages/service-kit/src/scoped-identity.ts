import type { PrincipalType } from "@agentplane/contracts";
import type { importJWK } from "jose";

type Key = Awaited<ReturnType<typeof importJWK>>;

/** One request a scoped signer's identities are accepted on. */
export interface ScopedRoute {
  method: string;
  /** As the contract writes it: `{name}` stands for one path segment. */
  path: string;
  /** The principals the signer may name there; any when absent. */
  principalTypes?: readonly PrincipalType[];
}

/**
 * A signer with a key pair of its own rather than the shared one (the egress proxy, decision
 * 0062): its tokens name it in `kid`, and a service that lists it accepts them only on `routes`.
 * Every other service, not knowing its public key, refuses them as any invalid identity.
 */
export interface ScopedIdentityKey {
  /** The signer's name, its tokens' `kid`. */
  id: string;
  publicKey: Key;
  routes: readonly ScopedRoute[];
}

/** The issuer of a scoped signer's tokens: never the shared key's, so no shared-key check takes them. */
export function scopedIssuer(id: string): string {
  return `agentplane:${id}`;
}

const compiled = new WeakMap<ScopedRoute, RegExp>();

function pattern(route: ScopedRoute): RegExp {
  let re = compiled.get(route);
  if (!re) {
    const parts = route.path.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"));
    re = new RegExp(`^${parts.join("[^/]+")}$`);
    compiled.set(route, re);
  }
  return re;
}

/** Whether a scoped signer's identity of `principalType` is accepted on this request. */
export function scopedRouteAllows(
  key: ScopedIdentityKey,
  request: { method: string; path: string },
  principalType: PrincipalType,
): boolean {
  const method = request.method.toUpperCase();
  return key.routes.some(
    (route) =>
      route.method.toUpperCase() === method &&
      pattern(route).test(request.path) &&
      (!route.principalTypes || route.principalTypes.includes(principalType)),
  );
}
