export { AddressPolicy } from "./address-policy.ts";
export {
  describeConnectionFailure,
  FETCH_TIMEOUT_MS,
  type FetchedBody,
  FetchRefusedError,
  MAX_BODY_BYTES,
  MAX_REDIRECTS,
  type RefusalReason,
  type Resolver,
  SafeFetcher,
  type SafeFetcherOptions,
} from "./safe-fetch.ts";
