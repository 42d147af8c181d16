export { freePort, type LocalServer, readBody, startLocalServer, waitForHealth } from "./http.ts";
export { OwnRedis } from "./own-redis.ts";
export {
  createTestDatabase,
  dropTestDatabase,
  requirePostgres,
  requireRedis,
  type ServiceAvailability,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  type TestDatabase,
  testRedisPrefix,
} from "./services.ts";
