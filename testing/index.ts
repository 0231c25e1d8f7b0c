/**
 * `voot-guard/testing`: an emulator of a VOOT group service and its authorization server,
 * for tests, examples and local development. It plays Feide/Dataporten (the default) or
 * SURFconext's OpenConext-voot (`dialect: 'openconext'`), behaves like the real service
 * (statuses, bodies, challenges, partial answers, `%2F` in ids) and can misbehave on demand
 * (faults, latency, rate limits). docs/emulator.md has the data file's schema.
 *
 * @example
 * ```ts
 * import { startEmulator } from 'voot-guard/testing'
 *
 * const emulator = await startEmulator()
 * const token = emulator.issueToken('bob')
 * emulator.faults.add({ kind: 'status', status: 503 }, { times: 1 })
 * // ... exercise the code under test against emulator.baseUrl ...
 * await emulator.close()
 * ```
 *
 * @module
 */
export {
  startEmulator,
  type Emulator,
  type EmulatorOptions,
  type EmulatorService,
  type EmulatorServiceOptions,
  type IssueClientTokenOptions,
  type IssueTokenOptions,
} from './emulator.js'
export {
  validateEmulatorData,
  type EmulatorClient,
  type EmulatorData,
  type EmulatorGroup,
  type EmulatorMembership,
  type EmulatorUser,
} from './data/data.js'
export { loadEmulatorData } from './data/data-file.js'
export { defaultData, ADHOC_GROUP_ID, ORG_ID, PUBLIC_ADHOC_GROUP_ID, SCHOOL_GROUP_ID } from './data/default-data.js'
export {
  openConextData,
  INVITE_GROUP_ID,
  PROJECT_BOARD_GROUP_ID,
  READING_CLUB_GROUP_ID,
  RESEARCH_DATA_GROUP_ID,
} from './data/openconext-data.js'
export { EMULATOR_DIALECTS, type EmulatorDialect } from './group-service/dialect.js'
export { TokenStore, type TokenIssueRequest, type TokenRecord } from './token-store.js'
export type { Fault, FaultController, FaultMatch } from './group-service/faults.js'
export type { RecordedRequest } from './request-log.js'
export type { OAuthServer } from './oauth-server/oauth-server.js'
export type { SessionsEnded } from './oauth-server/oauth-sessions.js'
