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
