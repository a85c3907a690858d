import type { Flow } from '../transactions/flow.js'
import type { BitcoinDeps } from './common.js'
import { lnReceiveFlow } from '../lightning/receive.js'
import { lnSendFlow } from '../lightning/send.js'
import { depositFlow, onchainReceiveFlow } from '../onchain/receive.js'
import { onchainSendFlow } from '../onchain/send.js'

export type { BitcoinDeps } from './common.js'

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
