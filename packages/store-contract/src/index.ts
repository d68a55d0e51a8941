export { runStoreContract, concurrentBulletId } from "./run-store-contract.js";
export type { MaybePromise, StoreContractContext, StoreContractOptions } from "./run-store-contract.js";
export { concurrentCostEntry } from "./learning-contract.js";
export { AWKWARD_STRINGS, NOW_ISO, UNKNOWN_BULLET_FIELDS, makeBullet } from "./awkward-values.js";
