export { BUNDLED_OUTPUT_CAPS, OutputCaps } from "./output-caps.ts";
export {
  BUNDLED_PRICES,
  canonicalModel,
  type ModelFamily,
  type ModelPrice,
  modelFamily,
  type PriceQuote,
  type PriceTable,
  Pricing,
  parsePriceOverrides,
} from "./pricing.ts";
export { priceOverridesSetting } from "./settings.ts";
