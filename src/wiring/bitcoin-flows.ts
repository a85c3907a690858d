import type { Flow } from '../transactions/flow.js'
import type { LightningDeps } from '../lightning/deps.js'
import { lnReceiveFlow } from '../lightning/receive.js'
import { lnSendFlow } from '../lightning/send.js'
import { depositFlow, onchainReceiveFlow } from '../onchain/receive.js'
import { onchainSendFlow } from '../onchain/send.js'
import type { BitcoinRails } from './bitcoin-rails.js'

/**
 * What the container builds the Bitcoin flows from: the deps both rails share
 * (src/bitcoin/deps.ts) and the Lightning send's reach to LNURL payees. Its rails are the wiring's,
 * with the sandbox nodes that the sandbox endpoints and tests reach.
 */
export type BitcoinFlowDeps = LightningDeps & { rails: BitcoinRails }

/** Every Bitcoin flow: Lightning receive and send, on-chain receive and send, and watcher-made deposits. */
export function bitcoinFlows(deps: BitcoinFlowDeps): Flow[] {
  return [
    lnReceiveFlow(deps),
    lnSendFlow(deps),
    onchainReceiveFlow(deps),
    onchainSendFlow(deps),
    depositFlow(deps),
  ]
}
