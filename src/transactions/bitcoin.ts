import type { Flow } from './flow.js'
import type { BitcoinDeps } from './bitcoin-common.js'
import { lnReceiveFlow } from './lightning.js'
import { lnSendFlow } from './lightning-send.js'
import { depositFlow, onchainReceiveFlow, onchainSendFlow } from './onchain.js'

export type { BitcoinDeps } from './bitcoin-common.js'

/** Every Bitcoin flow: Lightning receive and send, on-chain receive and send, and watcher-made deposits. */
export function bitcoinFlows(deps: BitcoinDeps): Flow[] {
  return [
    lnReceiveFlow(deps),
    lnSendFlow(deps),
    onchainReceiveFlow(deps),
    onchainSendFlow(deps),
    depositFlow(deps),
  ]
}
