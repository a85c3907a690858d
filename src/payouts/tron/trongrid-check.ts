/**
 * `svcpay rails check` for the TRON rail: whether the node answers, is on the configured network
 * and in sync with a solidified view, and whether the hot wallet holds TRX for fees and USDT.
 */
import { formatScaled } from '../../shared/amount.js'
import type { RailCheckReport, RailFailure } from '../../rails/rail.js'
import { TRON_GENESIS_BLOCK_IDS, type TronGridDeps, type TronNetworkName } from './trongrid-deps.js'
import { cleanMessage, type Json } from './trongrid-http.js'
import { headBlock, resources, usdtBalance } from './trongrid-node.js'

/** A head block older than this means the node is not keeping up with the chain. */
const HEAD_STALE_MS = 60_000
/** The solidified block is normally 19 blocks (about a minute) behind the head. */
const SOLID_LAG_BLOCKS_MAX = 100

export async function checkTronGrid(deps: TronGridDeps): Promise<RailCheckReport> {
  const { config, request, hotWalletAddress, network } = deps
  const report: RailCheckReport = { rail: 'tron', adapter: 'trongrid', reachable: false, problems: [] }
  const problems = report.problems
  try {
    const info = await request('/wallet/getnodeinfo', {})
    report.reachable = true
    const version = (info.configNodeInfo as Json | undefined)?.codeVersion
    if (typeof version === 'string') report.version = cleanMessage(version)
  } catch (err) {
    const failure = err as RailFailure
    report.reachable = failure.code === 'tron_api_key_refused' || failure.code?.startsWith('tron_http_')
    problems.push(
      failure.code === 'tron_api_key_refused'
        ? 'TronGrid refused TRONGRID_API_KEY'
        : `the node did not answer getnodeinfo: ${failure.message}`,
    )
    return report
  }
  const step = async (what: string, run: () => Promise<void>) => {
    try {
      await run()
    } catch (err) {
      problems.push(`${what}: ${(err as Error).message}`)
    }
  }
  await step('network', async () => {
    const genesis = await request('/wallet/getblockbynum', { num: 0 })
    const id = typeof genesis.blockID === 'string' ? genesis.blockID : ''
    const found = (Object.keys(TRON_GENESIS_BLOCK_IDS) as TronNetworkName[]).find(
      (name) => TRON_GENESIS_BLOCK_IDS[name] === id,
    )
    report.network = found ?? 'unknown'
    if (found !== network)
      problems.push(
        `the node is on ${found ?? `an unknown network (block 0 is ${cleanMessage(id) || 'missing'})`}, ` +
          `TRON_NETWORK is ${network}`,
      )
  })
  await step('sync', async () => {
    const head = await headBlock(deps)
    const ageMs = deps.now() - head.timestampMs
    report.synced = ageMs <= HEAD_STALE_MS
    if (!report.synced)
      problems.push(
        `the node's head block ${head.number} is ${Math.round(ageMs / 1000)} s old: it is not in sync`,
      )
    const solid = await request('/walletsolidity/getnowblock', {})
    const raw = (solid.block_header as Json | undefined)?.raw_data as Json | undefined
    // java-tron leaves a zero out of its JSON: block 0 has no `number`.
    const solidNumber = raw ? (raw.number ?? 0) : undefined
    if (!Number.isSafeInteger(solidNumber))
      problems.push('the node serves no solidified block (/walletsolidity)')
    else if (head.number - (solidNumber as number) > SOLID_LAG_BLOCKS_MAX)
      problems.push(`the solidified block is ${head.number - (solidNumber as number)} blocks behind the head`)
  })
  const balances: Record<string, string> = {}
  await step('hot wallet TRX', async () => {
    const wallet = await resources(deps)
    balances.TRX = formatScaled(wallet.balanceSun, 6)
    if (!wallet.exists) {
      problems.push(`the hot wallet ${hotWalletAddress} does not exist on this network: send it TRX first`)
      return
    }
    const energyValue = wallet.energyLeft * wallet.energyFee
    if (wallet.balanceSun + energyValue < config.feeLimitSun)
      problems.push(
        `the hot wallet holds ${formatScaled(wallet.balanceSun, 6)} TRX and ${wallet.energyLeft} staked energy, ` +
          `less than one transfer may burn (TRON_FEE_LIMIT_SUN, ${formatScaled(config.feeLimitSun, 6)} TRX)`,
      )
  })
  await step('hot wallet USDT', async () => {
    let held: bigint
    try {
      held = await usdtBalance(deps)
    } catch (err) {
      if ((err as RailFailure).code === 'tron_contract_validate_error')
        throw new Error(`TRON_USDT_CONTRACT ${config.usdtContract} is not a contract on this network`, {
          cause: err,
        })
      throw err
    }
    balances.USDT = formatScaled(held, 6)
    if (held === 0n) problems.push(`the hot wallet ${hotWalletAddress} holds no USDT`)
  })
  if (Object.keys(balances).length > 0) report.balances = balances
  if (!config.apiKey && /(^|\.)trongrid\.io$/i.test(new URL(deps.baseUrl).hostname))
    problems.push('TRONGRID_API_KEY is not set: TronGrid throttles requests without a key')
  return report
}
