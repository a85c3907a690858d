import type { AmountFormat, AmountInput, AmountOf } from './amounts.js'
import { Transport, type ClientOptions, type RateLimitInfo } from './http.js'
import { streamTransactionEvents, type StreamOptions } from './stream.js'
import {
  isFinalState,
  type Account,
  type AccountName,
  type CreateTransactionRequest,
  type DeliveryStatus,
  type Institution,
  type LightningAddress,
  type LightningAddressInput,
  type ListTransactionsQuery,
  type SourceOfFundsCodes,
  type TokenResponse,
  type Transaction,
  type TransactionEvent,
  type TransactionList,
  type Wallet,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookInput,
  type WebhookUpdated,
  type WebhookRotateInput,
  type WebhookRotated,
  type AccountLimits,
} from './types.js'

const enc = encodeURIComponent
/** The page size `listAllTransactions` asks for unless told otherwise: the most the server allows. */
const LIST_ALL_PAGE_SIZE = 100

/**
 * The svcpay API client. One method per endpoint; authentication, token reuse, rate limits and
 * retries are handled for you, and amounts are exact (decimal strings by default, or bigint minor
 * units with `amounts: 'minor'`).
 *
 * ```ts
 * const svcpay = new SvcpayClient({ baseUrl: 'http://localhost:8080', apiKey, apiSecret })
 * const quote = await svcpay.createTransaction({ ... })
 * ```
 */
export class SvcpayClient<F extends AmountFormat = 'decimal'> {
  /** The HTTP layer; exposed for the rare call the client has no method for. */
  readonly transport: Transport
  /** The sandbox networks' controls (contract section 9); only on a server with `RAILS=sandbox`. */
  readonly sandbox: SandboxApi<F>

  constructor(options: ClientOptions<F>) {
    this.transport = new Transport(options)
    this.sandbox = new SandboxApi<F>(this.transport)
  }

  /**
   * A client configured from the environment: `SVCPAY_URL` (default `http://localhost:8080`),
   * `SVCPAY_API_KEY` and `SVCPAY_API_SECRET`; `options` adds to or overrides them.
   */
  static fromEnv<F extends AmountFormat = 'decimal'>(
    options: Partial<ClientOptions<F>> = {},
  ): SvcpayClient<F> {
    const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {}
    const apiKey = options.apiKey ?? env.SVCPAY_API_KEY
    const apiSecret = options.apiSecret ?? env.SVCPAY_API_SECRET
    if (!apiKey || (!apiSecret && !options.signTokenRequest))
      throw new TypeError('Set SVCPAY_API_KEY and SVCPAY_API_SECRET (and SVCPAY_URL)')
    return new SvcpayClient<F>({
      ...options,
      baseUrl: options.baseUrl ?? env.SVCPAY_URL ?? 'http://localhost:8080',
      apiKey,
      ...(options.signTokenRequest ? {} : { apiSecret }),
    })
  }

  /** The rate-limit headers of the latest answer (limit, remaining, resetAt in epoch ms). */
  get rateLimit(): RateLimitInfo | undefined {
    return this.transport.rateLimit
  }

  // Authentication and account

  /**
   * The access token in use, requested with a fresh one-time signature when there is none or it is
   * about to expire. Every other method calls this for you.
   */
  async authenticate(): Promise<TokenResponse> {
    const { accessToken, expiredAt, accountId } = await this.transport.token()
    return { accessToken, expiredAt, accountId }
  }

  /** The id of the account the API key belongs to. */
  async accountId(): Promise<string> {
    return (await this.transport.token()).accountId
  }

  /** `GET /api/v2/account/{accountId}`: an account's information (your own by default). */
  async getAccount(accountId?: string): Promise<Account> {
    const id = accountId ?? (await this.accountId())
    return this.data(await this.transport.call('GET', `/api/v2/account/${enc(id)}`, { retry: 'safe' }))
  }

  /**
   * `GET /api/v2/account/{accountId}/limits`: the account's limits (per transaction, rolling 24 hours
   * and 30 days, sends per hour), what it has used of each and when each window frees up.
   */
  async getAccountLimits(accountId?: string): Promise<AccountLimits> {
    const id = accountId ?? (await this.accountId())
    return this.data(await this.transport.call('GET', `/api/v2/account/${enc(id)}/limits`, { retry: 'safe' }))
  }

  /** `GET /api/v2/account/onchain-address`: the account's permanent, reusable on-chain deposit address. */
  async getOnchainAddress(): Promise<{ staticOnchainAddress: string }> {
    return this.transport.call('GET', '/api/v2/account/onchain-address', { retry: 'safe' })
  }

  // Lightning Address

  /**
   * `PUT /api/v2/account/{accountId}/lightning-address`: claims a username (LUD-16: a-z, 0-9, `-`,
   * `_`, `.`), or changes the currency an address credits; the same call again changes nothing.
   */
  async setLightningAddress(input: LightningAddressInput, accountId?: string): Promise<LightningAddress> {
    const id = accountId ?? (await this.accountId())
    return this.data(
      await this.transport.call('PUT', `/api/v2/account/${enc(id)}/lightning-address`, {
        body: input,
        retry: 'safe',
      }),
    )
  }

  /** `GET /api/v2/account/{accountId}/lightning-address`: the account's address (404 when it has none). */
  async getLightningAddress(accountId?: string): Promise<LightningAddress> {
    const id = accountId ?? (await this.accountId())
    return this.data(
      await this.transport.call('GET', `/api/v2/account/${enc(id)}/lightning-address`, { retry: 'safe' }),
    )
  }

  /** `DELETE /api/v2/account/{accountId}/lightning-address`: gives the username up. */
  async deleteLightningAddress(accountId?: string): Promise<void> {
    const id = accountId ?? (await this.accountId())
    await this.transport.call('DELETE', `/api/v2/account/${enc(id)}/lightning-address`, { retry: 'never' })
  }

  // Wallets and rates

  /** `GET /api/v2/account/{accountId}/wallet/`: every wallet of an account (your own by default). */
  async listWallets(accountId?: string): Promise<Wallet<F>[]> {
    const id = accountId ?? (await this.accountId())
    return this.data(
      await this.transport.call('GET', `/api/v2/account/${enc(id)}/wallet/`, { retry: 'safe' }),
    )
  }

  /** `GET /api/v2/account/{accountId}/wallet/{walletId}`: one wallet. */
  async getWallet(walletId: string, accountId?: string): Promise<Wallet<F>> {
    const id = accountId ?? (await this.accountId())
    return this.data(
      await this.transport.call('GET', `/api/v2/account/${enc(id)}/wallet/${enc(walletId)}`, {
        retry: 'safe',
      }),
    )
  }

  /** Your wallet of one currency (a convenience over {@link listWallets}). */
  async walletFor(ccy: string): Promise<Wallet<F> | undefined> {
    return (await this.listWallets()).find((w) => w.ccy === ccy)
  }

  /**
   * `GET /api/v2/rate`: BTC exchange rates as exact decimal strings, keyed 'BTC' + currency code
   * (`rates.BTCUSD` is US dollars per bitcoin).
   */
  async getRates(): Promise<Record<string, string>> {
    return this.data(
      await this.transport.call('GET', '/api/v2/rate', { retry: 'safe', decode: { numbersAsDecimal: true } }),
    )
  }

  // Transactions

  /**
   * `POST /api/v2/transaction`: creates a transaction in state 'quoted', with fees and fxRate
   * computed; confirm it to execute. Give `amtRequested` on one side, as a decimal string or bigint
   * minor units. With an `extRefId` the call is idempotent and is retried after a network error;
   * without one it is sent once.
   */
  async createTransaction(body: CreateTransactionRequest): Promise<Transaction<F>> {
    return this.transport.call('POST', '/api/v2/transaction', {
      body,
      retry: body.extRefId ? 'safe' : 'never',
    })
  }

  /** `PUT /api/v2/transaction/{txnId}/confirm`: executes a quoted transaction (idempotent). */
  async confirmTransaction(txnId: string): Promise<Transaction<F>> {
    return this.transport.call('PUT', `/api/v2/transaction/${enc(txnId)}/confirm`, { retry: 'safe' })
  }

  /** `PUT /api/v2/transaction/{txnId}/cancel`: cancels a quoted transaction (it becomes 'usercanceled'). */
  async cancelTransaction(txnId: string): Promise<Transaction<F>> {
    return this.transport.call('PUT', `/api/v2/transaction/${enc(txnId)}/cancel`, { retry: 'never' })
  }

  /** `GET /api/v2/transaction/{txnId}`: one transaction. */
  async getTransaction(txnId: string): Promise<Transaction<F>> {
    return this.transport.call('GET', `/api/v2/transaction/${enc(txnId)}`, { retry: 'safe' })
  }

  /** `GET /api/v2/transaction`: transactions newest first, filtered and paged. */
  async listTransactions(query: ListTransactionsQuery = {}): Promise<TransactionList<F>> {
    return this.transport.call('GET', '/api/v2/transaction', { retry: 'safe', query: { ...query } })
  }

  /**
   * Every transaction matching `query`, newest first, as an async iterator: it pages by cursor
   * (`startingAfter`, the last txnId of each page), so transactions created meanwhile neither
   * repeat nor shift a row out of the walk. Pages of `query.limit` (default 100) are fetched as the
   * loop asks for them; `startingAfter` in `query` starts the walk after that transaction.
   *
   * ```ts
   * for await (const txn of svcpay.listAllTransactions({ txnStatuses: 'completed' })) total += 1
   * ```
   */
  async *listAllTransactions(
    query: Omit<ListTransactionsQuery, 'page' | 'endingBefore'> = {},
  ): AsyncGenerator<Transaction<F>> {
    let after = query.startingAfter
    for (;;) {
      const page = await this.listTransactions({
        ...query,
        limit: query.limit ?? LIST_ALL_PAGE_SIZE,
        ...(after ? { startingAfter: after } : {}),
      })
      for (const txn of page.data) yield txn
      const last = page.data[page.data.length - 1]
      if (!page.pagination.hasMore || !last) return
      after = last.txnId
    }
  }

  /**
   * `GET /api/v2/transaction/{txnId}/events`: the transaction's status as an async iterator — the
   * current state at once, then every change, ending after a final state (completed, failed,
   * expired, rejected, error, usercanceled). Dropped connections are reopened for you.
   *
   * ```ts
   * for await (const event of svcpay.streamTransaction(txn.txnId)) console.log(event.txnState)
   * ```
   */
  streamTransaction(txnId: string, options?: StreamOptions): AsyncGenerator<TransactionEvent> {
    return streamTransactionEvents(this.transport, txnId, options)
  }

  /**
   * Follows the status stream until `until` holds (by default, until a final state) and returns
   * the transaction as it then stands. `timeoutMs` bounds the wait (a `TimeoutError` is thrown).
   */
  async waitForTransaction(
    txnId: string,
    options: { until?: (event: TransactionEvent) => boolean; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<Transaction<F>> {
    const until = options.until ?? ((e: TransactionEvent) => isFinalState(e.txnState))
    const signals = [
      options.signal,
      options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined,
    ].filter((s): s is AbortSignal => s !== undefined)
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0]
    for await (const event of this.streamTransaction(txnId, signal ? { signal } : {})) {
      if (until(event)) return this.getTransaction(txnId)
    }
    // The stream ended on a final state that `until` did not accept; the transaction will not change again.
    return this.getTransaction(txnId)
  }

  // Webhooks

  /** `POST /api/v2/webhook`: registers the account's webhook, replacing any existing one. */
  async createWebhook(input: WebhookInput): Promise<Webhook> {
    return this.transport.call('POST', '/api/v2/webhook', { body: input, retry: 'never' })
  }

  /** `GET /api/v2/webhook`: the account's webhook, if any (the secret is never returned). */
  async listWebhooks(): Promise<Webhook[]> {
    return this.data(await this.transport.call('GET', '/api/v2/webhook', { retry: 'safe' }))
  }

  /** `PUT /api/v2/webhook/{webhookId}`: changes the callback URL, the secret, or both. */
  async updateWebhook(webhookId: string, input: Partial<WebhookInput>): Promise<WebhookUpdated> {
    return this.transport.call('PUT', `/api/v2/webhook/${enc(webhookId)}`, { body: input, retry: 'safe' })
  }

  /**
   * `POST /api/v2/webhook/{webhookId}/rotate-secret`: the new secret signs from now on; the previous
   * one keeps signing beside it for `overlapS` seconds, so the receiver can switch at any moment.
   */
  async rotateWebhookSecret(webhookId: string, input: WebhookRotateInput): Promise<WebhookRotated> {
    const path = `/api/v2/webhook/${enc(webhookId)}/rotate-secret`
    return this.transport.call('POST', path, { body: input, retry: 'never' })
  }

  /** `DELETE /api/v2/webhook/{webhookId}`: removes the webhook; no further state changes are pushed. */
  async deleteWebhook(webhookId: string): Promise<void> {
    await this.transport.call('DELETE', `/api/v2/webhook/${enc(webhookId)}`, { retry: 'never' })
  }

  /** `GET /api/v2/webhook/{webhookId}/deliveries`: recent deliveries with their attempts, newest first. */
  async listWebhookDeliveries(
    webhookId: string,
    query: { page?: number; limit?: number; status?: DeliveryStatus } = {},
  ): Promise<WebhookDeliveryList> {
    return this.transport.call('GET', `/api/v2/webhook/${enc(webhookId)}/deliveries`, {
      retry: 'safe',
      query,
    })
  }

  /** `POST /api/v2/webhook/{webhookId}/deliveries/{deliveryId}/redeliver`: sends a delivery's event again. */
  async redeliverWebhookDelivery(webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
    const path = `/api/v2/webhook/${enc(webhookId)}/deliveries/${enc(deliveryId)}/redeliver`
    return this.data(await this.transport.call('POST', path, { retry: 'never' }))
  }

  // Fiat payout reference data

  /** `GET /api/v2/fiat/institutions`: the banks a payout in `ccy` can go to (Vietnamese banks for VND). */
  async listInstitutions(ccy = 'VND'): Promise<Institution[]> {
    return this.data(
      await this.transport.call('GET', '/api/v2/fiat/institutions', { retry: 'safe', query: { ccy } }),
    )
  }

  /** `GET /api/v2/fiat/source-of-funds-codes`: the code tables of a payout's sourceOfFunds. */
  async getSourceOfFundsCodes(): Promise<SourceOfFundsCodes> {
    return this.data(
      await this.transport.call('GET', '/api/v2/fiat/source-of-funds-codes', { retry: 'safe' }),
    )
  }

  /**
   * `GET /api/v2/fiat/account-name`: whose bank account this is, as the bank names it (NAPAS
   * account inquiry). Send the name you expect as `destReq.reqDetails.expectedName` to have a VND
   * payout checked against it before it is sent. The name is personal data: keep it out of logs.
   */
  async getAccountName(institutionCode: string, bankAcctNum: string): Promise<AccountName> {
    return this.data(
      await this.transport.call('GET', '/api/v2/fiat/account-name', {
        retry: 'safe',
        query: { institutionCode, bankAcctNum },
      }),
    )
  }

  private data<T>(body: unknown): T {
    return (body as { data: T }).data
  }
}

/**
 * The sandbox networks (`RAILS=sandbox` only): an outside payer, outside invoices, blocks, and
 * test money. They produce real artefacts, so the rest of your code runs unchanged against them.
 */
export class SandboxApi<F extends AmountFormat = 'decimal'> {
  constructor(private readonly transport: Transport) {}

  /** `POST /sandbox/fund`: credits your wallet of `ccy` with test money; returns the wallet. */
  async fund(input: { ccy: string; amount: AmountInput }): Promise<Wallet<F>> {
    return (
      await this.transport.call<{ data: Wallet<F> }>('POST', '/sandbox/fund', { body: input, retry: 'never' })
    ).data
  }

  /** `POST /sandbox/lightning/pay`: an outside payer pays one of your Lightning invoices. */
  async payInvoice(paymentRequest: string): Promise<{ paymentHash: string; amount: AmountOf<F> }> {
    return this.transport.call('POST', '/sandbox/lightning/pay', {
      body: { paymentRequest },
      retry: 'never',
      decode: { defaultCcy: 'BTC' },
    })
  }

  /**
   * `POST /sandbox/lightning/invoice`: an outside invoice to test Lightning sends against (no
   * amount: a zero-amount invoice; `outcome: 'fail'`: paying it fails).
   */
  async createInvoice(
    input: { amount?: AmountInput; outcome?: 'succeed' | 'fail' } = {},
  ): Promise<{ paymentRequest: string }> {
    return this.transport.call('POST', '/sandbox/lightning/invoice', {
      body: input,
      retry: 'never',
      decode: { defaultCcy: 'BTC' },
    })
  }

  /** `POST /sandbox/onchain/send`: an outside payment of `amount` BTC to an address, into the mempool. */
  async sendOnchain(input: { address: string; amount: AmountInput }): Promise<{ txid: string }> {
    return this.transport.call('POST', '/sandbox/onchain/send', {
      body: input,
      retry: 'never',
      decode: { defaultCcy: 'BTC' },
    })
  }

  /** `POST /sandbox/onchain/mine`: mines blocks, the first taking every transaction in the mempool. */
  async mine(blocks = 1): Promise<{ height: number }> {
    return this.transport.call('POST', '/sandbox/onchain/mine', { body: { blocks }, retry: 'never' })
  }
}
