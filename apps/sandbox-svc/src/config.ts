import { z } from "zod";

/**
 * `SANDBOX_IMAGES_JSON`: the local driver's image catalog, `{"<name>": "<root filesystem dir>"}`.
 * Exported so every launcher that embeds the service parses it the same way.
 */
export const SandboxImagesJsonSchema = z.string().transform((s, ctx) => {
  try {
    return z.record(z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/), z.string().startsWith("/")).parse(JSON.parse(s));
  } catch {
    ctx.addIssue({
      code: "custom",
      message: 'a JSON object of image name → absolute directory, e.g. {"debian":"/srv/debian"}',
    });
    return z.NEVER;
  }
});

/**
 * `SANDBOX_EGRESS_HOST_MAP` (tests only): `{"<name>[:<port>]": "<address>[:<port>]"}`, so local
 * servers stand in for internet hosts behind the egress proxy. Policies still see `<name>`.
 */
export const SandboxEgressHostMapSchema = z.string().transform((s, ctx) => {
  try {
    return z
      .record(z.string().regex(/^[a-z0-9._-]+(:\d{1,5})?$/), z.string().regex(/^[0-9a-fA-F.:[\]]+?(:\d{1,5})?$/))
      .parse(JSON.parse(s));
  } catch {
    ctx.addIssue({
      code: "custom",
      message: 'a JSON object of host[:port] → address[:port], e.g. {"registry.test":"127.0.0.1:8080"}',
    });
    return z.NEVER;
  }
});
