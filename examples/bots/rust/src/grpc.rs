//! Just enough gRPC for `Referee.Play`, over HTTP/2 with the h2 crate.
//!
//! gRPC on the wire: a POST to `/sevenrocks.v1.Referee/Play` with
//! `content-type: application/grpc` and `te: trailers`; each message in either
//! direction is a 5-byte prefix (a compression flag, 0, and the big-endian length)
//! and the protobuf bytes; the call's status is the `grpc-status` (and
//! `grpc-message`) of the response trailers, or of the headers when the referee
//! refuses the call before sending anything. (tonic does all this; this kit uses h2
//! directly so that it builds from Debian's packaged crates without crates.io.)

use bytes::{Buf, BufMut, Bytes, BytesMut};
use h2::client::SendRequest;
use prost::Message;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::{pb, Bot};

pub const INVALID_ARGUMENT: i32 = 3;
pub const PERMISSION_DENIED: i32 = 7;
pub const RESOURCE_EXHAUSTED: i32 = 8;
pub const FAILED_PRECONDITION: i32 = 9;
pub const UNIMPLEMENTED: i32 = 12;
pub const UNAVAILABLE: i32 = 14;
pub const UNAUTHENTICATED: i32 = 16;

/// How one stream ended.
pub enum End {
    /// The referee said Goodbye: stop, do not reconnect.
    Goodbye(String),
    /// The call ended with a gRPC status other than OK.
    Status(i32, String),
    /// The connection failed (refused, reset, dropped): worth reconnecting.
    Transport(String),
}

fn transport<E: std::fmt::Display>(e: E) -> End {
    End::Transport(e.to_string())
}

fn frame(msg: &pb::BotMessage) -> Bytes {
    let mut buf = BytesMut::with_capacity(5 + msg.encoded_len());
    buf.put_u8(0);
    buf.put_u32(msg.encoded_len() as u32);
    msg.encode(&mut buf).expect("a BytesMut grows as needed");
    buf.freeze()
}

fn status_of(headers: &http::HeaderMap) -> Option<(i32, String)> {
    let code = headers.get("grpc-status")?.to_str().ok()?.parse().ok()?;
    let message = headers.get("grpc-message").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    Some((code, message))
}

/// Open one stream to `address` ("HOST:PORT" or "unix:/path") and play until it ends.
pub async fn play(address: &str, token: &str, entrant: &str, bot: &mut Bot) -> End {
    if let Some(path) = address.strip_prefix("unix:") {
        match tokio::net::UnixStream::connect(path.trim_start_matches("//")).await {
            Ok(io) => session(io, "localhost", token, entrant, bot).await,
            Err(e) => transport(e),
        }
    } else {
        match tokio::net::TcpStream::connect(address).await {
            Ok(io) => {
                let _ = io.set_nodelay(true);
                session(io, address, token, entrant, bot).await
            }
            Err(e) => transport(e),
        }
    }
}

async fn session<T>(io: T, authority: &str, token: &str, entrant: &str, bot: &mut Bot) -> End
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (client, connection) = match h2::client::handshake(io).await {
        Ok(pair) => pair,
        Err(e) => return transport(e),
    };
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let end = call(client, authority, token, entrant, bot).await;
    driver.abort();
    end
}

async fn call(client: SendRequest<Bytes>, authority: &str, token: &str, entrant: &str, bot: &mut Bot) -> End {
    let mut client = match client.ready().await {
        Ok(c) => c,
        Err(e) => return transport(e),
    };
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("http://{authority}/sevenrocks.v1.Referee/Play"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .expect("a valid request");
    let (response, mut send) = match client.send_request(request, false) {
        Ok(pair) => pair,
        Err(e) => return transport(e),
    };
    if let Err(e) = send.send_data(frame(&bot.hello(entrant)), false) {
        return transport(e);
    }
    let response = match response.await {
        Ok(r) => r,
        Err(e) => return transport(e),
    };
    if let Some((code, message)) = status_of(response.headers()) {
        if code != 0 {
            return End::Status(code, message); // refused before any message ("trailers-only")
        }
    }
    if response.status() != http::StatusCode::OK {
        return End::Status(UNAVAILABLE, format!("HTTP status {}", response.status()));
    }
    let mut body = response.into_body();
    let mut buf = BytesMut::new();
    while let Some(chunk) = body.data().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => return transport(e),
        };
        let _ = body.flow_control().release_capacity(chunk.len());
        buf.extend_from_slice(&chunk);
        while buf.len() >= 5 {
            let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
            if buf.len() < 5 + len {
                break;
            }
            buf.advance(5);
            let batch = match pb::RefereeBatch::decode(buf.split_to(len).freeze()) {
                Ok(b) => b,
                Err(e) => return End::Status(INVALID_ARGUMENT, format!("the referee sent a message that does not parse: {e}")),
            };
            for msg in batch.messages {
                if let Some(answer) = bot.handle(msg) {
                    if let Err(e) = send.send_data(frame(&answer), false) {
                        return transport(e);
                    }
                }
            }
            if bot.goodbye.is_some() {
                let _ = send.send_data(Bytes::new(), true); // half-close: we have nothing more to say
            }
        }
    }
    let trailers = match body.trailers().await {
        Ok(t) => t.unwrap_or_default(),
        Err(e) => return transport(e),
    };
    match (status_of(&trailers), bot.goodbye.take()) {
        (_, Some(reason)) => End::Goodbye(reason),
        (Some((code, message)), None) if code != 0 => End::Status(code, message),
        _ => End::Transport("the stream ended without a Goodbye".into()),
    }
}
