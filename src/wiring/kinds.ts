/**
 * Every kind of transaction this service serves, as its flows declare them, and the methods a
 * request may already name that have no kind yet. The container builds the kind registry from this
 * list and hands it to whoever needs it; the engine (src/transactions) never imports a flow.
 *
 * The order matters in one place: the unknown-method refusal lists the methods in the order the
 * kinds first name them (svcpay, lightning, on-chain, tron, vnd-instant, eth), so a new kind goes last.
 */
import { LIGHTNING_KINDS } from '../lightning/kinds.js'
import { ONCHAIN_KINDS } from '../onchain/kinds.js'
import { PAYIN_KINDS } from '../payins/kinds.js'
import { PAYOUT_KINDS } from '../payouts/kinds.js'
import { SWAP_KINDS } from '../swap/kinds.js'
import {
  createKindRegistry,
  type AnnouncedMethod,
  type KindDeclaration,
  type KindRegistry,
} from '../transactions/kinds.js'

export const KIND_DECLARATIONS = [
  ...SWAP_KINDS,
  ...LIGHTNING_KINDS,
  ...ONCHAIN_KINDS,
  ...PAYOUT_KINDS,
  ...PAYIN_KINDS,
] as const satisfies readonly KindDeclaration[]

/**
 * The methods announced without a kind, refused as coming soon: none now that `eth` has its kind
 * (issue 33, src/payouts/kinds.ts).
 */
export const ANNOUNCED_METHODS: readonly AnnouncedMethod[] = []

/** The registry of this service's kinds (checked when it is made, so at start). */
export function serviceKinds(): KindRegistry {
  return createKindRegistry(KIND_DECLARATIONS, ANNOUNCED_METHODS)
}
