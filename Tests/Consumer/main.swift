// The program of the consumer package that scripts/consumer-test.sh makes (`make consumer-test`): a package that
// depends on subd by version, as any other does, and uses SubscriptionNotifications and SubscriptionClient.
//
//   consumer check HOST:PORT       NotificationHub in process, then SubscriptionClient against the subd at HOST:PORT
//   consumer block N HOST:PORT     docs/SWIFT.md's N-th ```swift block (its "127.0.0.1:7827" is HOST:PORT)
//
// Any mismatch or error ends it with status 1.
let arguments = CommandLine.arguments
do {
    if arguments.count == 3, arguments[1] == "check" {
        try checkHub()
        try await checkNetwork(arguments[2])
    } else if arguments.count == 4, arguments[1] == "block", let n = Int(arguments[2]), (1...docBlocks.count) ~= n {
        try await docBlocks[n - 1]()
    } else {
        fail("usage: consumer check HOST:PORT | consumer block N HOST:PORT (N from 1 to \(docBlocks.count))")
    }
} catch {
    fail("\(error)")
}
