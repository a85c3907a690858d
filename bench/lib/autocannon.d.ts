// The slice of autocannon 9's programmatic API the load client uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p90: number
    p97_5: number
    p99: number
    p99_9: number
  }

  interface RequestSpec {
    method?: string
    path?: string
    body?: string
    headers?: Record<string, string>
    setupRequest?: (request: RequestSpec, context: Record<string, any>) => RequestSpec | undefined
    onResponse?: (
      status: number,
      body: string,
      context: Record<string, any>,
      headers: Record<string, string>,
    ) => void
  }

  interface Client {
    requestIterator: {
      initialContext: Record<string, any>
      resetContext(): void
      rebuildRequest(): void
    }
    /** Replaces the connection's request (built once, then sent again and again). */
    setRequest(request: { method?: string; path?: string; headers?: Record<string, string> }): void
  }

  interface Options {
    url: string
    connections?: number
    duration?: number
    pipelining?: number
    timeout?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    requests?: RequestSpec[]
    setupClient?: (client: Client) => void
  }

  interface Result {
    requests: Histogram
    latency: Histogram
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    mismatches: number
    statusCodeStats: Record<string, { count: number }>
  }

  interface Instance extends PromiseLike<Result> {
    stop(): void
  }

  function autocannon(opts: Options): Instance
  export default autocannon
}
