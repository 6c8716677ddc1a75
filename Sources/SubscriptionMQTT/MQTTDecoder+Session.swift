extension MQTTReader {
    /// DISCONNECT's body (section 3.14): empty in 3.1.1 (the fixed header's check made sure); in 5.0 empty (reason
    /// 0), the reason code alone, or the reason code and the properties.
    mutating func disconnect(version: MQTTVersion) throws(MQTTDecodeError) -> MQTTDisconnect {
        var disconnect = MQTTDisconnect()
        if version == .v5 && !isAtEnd {
            disconnect.reasonCode = try byte("the reason code")
            if !isAtEnd { disconnect.properties = try properties(.disconnect, in: "DISCONNECT") }
        }
        try expectEnd(of: "DISCONNECT")
        return disconnect
    }

    /// AUTH's body (section 3.15, 5.0 only): empty (reason 0), the reason code alone, or the reason code and the
    /// properties.
    mutating func auth() throws(MQTTDecodeError) -> MQTTAuth {
        var auth = MQTTAuth()
        if !isAtEnd {
            auth.reasonCode = try byte("the reason code")
            if !isAtEnd { auth.properties = try properties(.auth, in: "AUTH") }
        }
        try expectEnd(of: "AUTH")
        return auth
    }
}
