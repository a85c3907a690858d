/**
 * Which of a send's transactions (attempt 0 and its replacements, one nonce) is mined in a
 * canonical block, from its receipt (internal/ethapi/api.go GetTransactionReceipt: null while
 * pending or when its block was reorged out) and the block at the receipt's height.
 */
import { hexHash, hexQuantity, object } from './jsonrpc-client.js'
import type { EthDeps } from './jsonrpc-deps.js'
import type { EthSend, EthSentTx } from './jsonrpc-sends.js'

export interface MinedTx {
  tx: EthSentTx
  blockNumber: bigint
  blockHash: string
  succeeded: boolean
  feeWei: bigint
  logs: unknown[]
}

/** The one of our transactions for the send's nonce that is in a canonical block, if any. */
export async function findMined(deps: EthDeps, send: EthSend): Promise<MinedTx | undefined> {
  for (const tx of [...send.txs].reverse()) {
    const receipt = await deps.rpc('eth_getTransactionReceipt', [tx.txHash])
    if (receipt === null) continue
    const r = object(receipt, 'receipt')
    const blockNumber = hexQuantity(r.blockNumber, 'receipt.blockNumber')
    const blockHash = hexHash(r.blockHash, 'receipt.blockHash')
    // A node behind a load balancer, or mid-reorg, may still answer from a block that is gone.
    const block = await deps.rpc('eth_getBlockByNumber', ['0x' + blockNumber.toString(16), false])
    if (block === null || hexHash(object(block, 'block').hash, 'block.hash') !== blockHash) continue
    const gasUsed = hexQuantity(r.gasUsed, 'receipt.gasUsed')
    const price = hexQuantity(r.effectiveGasPrice, 'receipt.effectiveGasPrice')
    return {
      tx,
      blockNumber,
      blockHash,
      succeeded: hexQuantity(r.status, 'receipt.status') === 1n,
      feeWei: gasUsed * price,
      logs: Array.isArray(r.logs) ? r.logs : [],
    }
  }
  return undefined
}
