/**
 * What the TRON rail reads from the node about its hot wallet and the chain: the wallet's USDT
 * (a constant call of the token's `balanceOf`), its TRX, energy and bandwidth, the chain's prices,
 * the head block, and whether a transaction is in a block yet.
 */
import type { RailReserves } from '../../rails/rail.js'
import { RailFailure } from '../../rails/rail.js'
import type { TronGridDeps } from './trongrid-deps.js'
import { count, decodeNodeMessage, hasKeys, type Json } from './trongrid-http.js'

/** `wallet` is the node's head state; `walletsolidity` its solidified (final) state. */
export type StateView = 'wallet' | 'walletsolidity'

export interface ConstantCallResult {
  ok: boolean
  returned: string
  energyUsed: bigint
  message: string
}

/**
 * Runs a call on the node's head state without a transaction (`/wallet/triggerconstantcontract`,
 * Wallet.callConstantContract), or on the solidified state (`/walletsolidity/...`, the same
 * servlet on the solidity node). java-tron answers `result.result: true` even for a call that
 * reverted; then `transaction.ret[0].ret` is FAILED and `result.message` says why.
 */
export async function constantCall(
  deps: TronGridDeps,
  selector: string,
  parameter: string,
  view: StateView = 'wallet',
): Promise<ConstantCallResult> {
  const answer = await deps.request(`/${view}/triggerconstantcontract`, {
    owner_address: deps.ownerHex,
    contract_address: deps.contractHex,
    function_selector: selector,
    parameter,
    visible: false,
  })
  const result = (answer.result ?? {}) as Json
  if (result.result !== true) {
    const code = typeof result.code === 'string' ? result.code : 'OTHER_ERROR'
    throw new RailFailure(`tron_${code.toLowerCase()}`, decodeNodeMessage(result.message), true)
  }
  const ret = ((answer.transaction as Json | undefined)?.ret as Json[] | undefined)?.[0]?.ret
  const returned = Array.isArray(answer.constant_result) ? answer.constant_result[0] : undefined
  return {
    ok: ret !== 'FAILED',
    returned: typeof returned === 'string' ? returned.toLowerCase() : '',
    energyUsed: count(answer.energy_used, 'energy_used'),
    message: result.message === undefined ? '' : decodeNodeMessage(result.message),
  }
}

/** The hot wallet's USDT (`balanceOf`), in minor units, at the head or the solidified state. */
export async function usdtBalance(deps: TronGridDeps, view: StateView = 'wallet'): Promise<bigint> {
  const answer = await constantCall(
    deps,
    'balanceOf(address)',
    deps.ownerHex.slice(2).padStart(64, '0'),
    view,
  )
  if (!answer.ok || !/^[0-9a-f]{64}$/.test(answer.returned))
    throw new RailFailure('tron_bad_response', `balanceOf answered ${answer.message || 'no number'}`, true)
  return BigInt('0x' + answer.returned)
}

export interface WalletResources {
  /** The node knows the account (it has received TRX). */
  exists: boolean
  balanceSun: bigint
  energyLeft: bigint
  stakedNetLeft: bigint
  freeNetLeft: bigint
  /** Sun per unit of energy, and per byte of bandwidth. */
  energyFee: bigint
  transactionFee: bigint
}

/** The hot wallet's TRX, staked energy and bandwidth left, and the chain's prices. */
export async function resources(deps: TronGridDeps): Promise<WalletResources> {
  const account = await deps.request('/wallet/getaccount', { address: deps.ownerHex, visible: false })
  const res = await deps.request('/wallet/getaccountresource', { address: deps.ownerHex, visible: false })
  const params = await deps.request('/wallet/getchainparameters', {})
  const list = Array.isArray(params.chainParameter) ? (params.chainParameter as Json[]) : []
  const param = (key: string): bigint | undefined => {
    const found = list.find((p) => p.key === key)
    return found ? count(found.value, key) : undefined
  }
  const energyFee = param('getEnergyFee')
  const transactionFee = param('getTransactionFee')
  if (energyFee === undefined || energyFee <= 0n || transactionFee === undefined)
    throw new RailFailure('tron_bad_response', 'getchainparameters lacks the energy or bandwidth price', true)
  // java-tron leaves zero values out of its JSON: a missing field is 0.
  const left = (limit: string, used: string) => {
    const value = count(res[limit], limit) - count(res[used], used)
    return value > 0n ? value : 0n
  }
  return {
    exists: hasKeys(account),
    balanceSun: count(account.balance, 'balance'),
    energyLeft: left('EnergyLimit', 'EnergyUsed'),
    stakedNetLeft: left('NetLimit', 'NetUsed'),
    freeNetLeft: left('freeNetLimit', 'freeNetUsed'),
    energyFee,
    transactionFee,
  }
}

export async function headBlock(deps: TronGridDeps): Promise<{ number: number; timestampMs: number }> {
  const block = await deps.request('/wallet/getnowblock', {})
  const raw = ((block.block_header ?? {}) as Json).raw_data as Json | undefined
  const number = raw?.number
  const timestampMs = raw?.timestamp
  if (!Number.isSafeInteger(number) || !Number.isSafeInteger(timestampMs))
    throw new RailFailure('tron_bad_response', 'getnowblock answered without a block number and time', true)
  return { number: number as number, timestampMs: timestampMs as number }
}

/** True when either query shows the transaction in a block. */
export async function isOnChain(deps: TronGridDeps, txHash: string): Promise<boolean> {
  if (hasKeys(await deps.request('/wallet/gettransactioninfobyid', { value: txHash }))) return true
  return hasKeys(await deps.request('/wallet/gettransactionbyid', { value: txHash }))
}

export async function reserves(deps: TronGridDeps): Promise<RailReserves> {
  // Final figures only: the USDT the solidified state holds, like every outcome read here.
  const usdt = await usdtBalance(deps, 'walletsolidity')
  const account = await deps.request('/wallet/getaccount', { address: deps.ownerHex, visible: false })
  return {
    balances: { USDT: usdt, TRX: count(account.balance, 'balance') },
    // Nothing arrives on this rail: any USDT sent to the hot wallet is already final here.
    incoming: { USDT: 0n },
  }
}
