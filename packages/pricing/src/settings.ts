import { ConfigError } from "@agentplane/service-kit";
import { z } from "zod";
import { type PriceTable, parsePriceOverrides } from "./pricing.ts";

/**
 * `PRICE_TABLE_JSON` (the JSON or a path to it) as price overrides; a bad value is a ConfigError
 * naming the variable. Read by audit and by the inference proxy, which prices its estimates alike.
 */
export function priceOverridesSetting(value: string | undefined): PriceTable {
  try {
    return parsePriceOverrides(value);
  } catch (err) {
    const message =
      err instanceof z.ZodError
        ? err.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join(", ")
        : (err as Error).message;
    throw new ConfigError([{ name: "PRICE_TABLE_JSON", message }]);
  }
}
