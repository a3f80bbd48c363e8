#include "gateway/config/config.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace config_config_test {

using namespace gateway::config;
using namespace std::chrono_literals;

namespace {

const std::string minimal = R"(server:
  listen: 127.0.0.1:8080
upstreams:
  - name: openai
    base_url: https://api.openai.com/v1
    api_key: ${CG_TEST_KEY}
    auth: forward
    models: ["*"]
)";

// The error for `yaml`, or a failed check when it loaded.
std::string error_of(const std::string& yaml) {
    auto loaded = load_string(yaml, "test.yaml");
    BOOST_TEST(!loaded);
    return loaded.error;
}

std::string with_server(const std::string& lines) {
    return "server:\n" + lines + "upstreams:\n  - name: a\n    base_url: http://127.0.0.1:9/v1\n";
}

std::string with_upstream(const std::string& lines) {
    return "upstreams:\n  - name: a\n    base_url: http://127.0.0.1:9/v1\n" + lines;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(config_loading)

BOOST_AUTO_TEST_CASE(minimal_file_from_the_design_loads_with_defaults) {
    ::setenv("CG_TEST_KEY", "sk-secret-1234", 1);
    auto loaded = load_string(minimal, "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& c = *loaded.value;
    BOOST_TEST(c.server.listen.host == "127.0.0.1");
    BOOST_TEST(c.server.listen.port == 8080);
    BOOST_TEST(c.server.body_limit == 32u * 1024 * 1024);
    BOOST_TEST_REQUIRE(c.upstreams.size() == 1u);
    const auto& u = c.upstreams[0];
    BOOST_TEST(u.api_key == "sk-secret-1234");
    BOOST_TEST(u.endpoint.tls);
    BOOST_TEST(u.endpoint.host == "api.openai.com");
    BOOST_TEST(u.endpoint.port == 443);
    BOOST_TEST(u.endpoint.base_path == "/v1");
    BOOST_TEST((u.auth == auth_mode::forward));
    BOOST_TEST(u.models == std::vector<std::string>{"*"});
    ::unsetenv("CG_TEST_KEY");
}

BOOST_AUTO_TEST_CASE(shipped_default_config_is_valid) {
    auto loaded = load_file(CONTEXTGATE_TEST_DATA "/../../config/gateway.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    BOOST_TEST(loaded.value->upstreams.at(0).name == "openai");
}

// Every setting check-config prints is documented in the shipped, commented config/gateway.yaml
// (as `name:`, set or commented out): a new field without its line there fails here. The lists
// the shipped file leaves empty get one entry each, so their fields are printed too.
BOOST_AUTO_TEST_CASE(every_setting_is_documented_in_the_shipped_config) {
    const std::string path = CONTEXTGATE_TEST_DATA "/../../config/gateway.yaml";
    auto loaded = load_file(path);
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    auto& c = *loaded.value;
    c.upstreams.at(0).model_map.emplace_back("gpt-alias", "gpt-real");
    virtual_key key;
    key.name = "ci";
    key.digest = hashed_key(std::string(20, 'k'));
    c.admin.keys.push_back(key);
    mcp_server_config server;
    server.name = "files";
    server.command = "mcp-files";
    c.mcp_servers.push_back(server);
    route_config route;
    route.model = "smart";
    route.targets.push_back({"openai", "gpt-5", 1, 0});
    c.routes.push_back(route);
    guardrail_config guardrail;
    guardrail.name = "secrets";
    guardrail.regex.push_back({"ticket", "TICKET-[0-9]+"});
    guardrail.webhook = guardrail_webhook{};
    c.guardrails.push_back(guardrail);
    std::ifstream in(path);
    std::string documented((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream printed(to_yaml(c));
    std::size_t checked = 0;
    for (std::string line; std::getline(printed, line);) {
        auto start = line.find_first_not_of(" -");
        auto colon = line.find(':', start);
        if (start == std::string::npos || colon == std::string::npos || line[start] == '"')
            continue;  // a list item's value, or a map entry named by the user
        auto name = line.substr(start, colon - start);
        ++checked;
        BOOST_TEST(documented.find(name + ":") != std::string::npos,
                   "`" << name << "` is not documented in config/gateway.yaml");
    }
    BOOST_TEST(checked > 80u);  // the whole configuration was printed
}

BOOST_AUTO_TEST_CASE(environment_interpolation_with_defaults) {
    ::setenv("CG_TEST_PORT", "9999", 1);
    ::unsetenv("CG_TEST_UNSET");
    auto loaded = load_string(
        "server:\n  listen: 127.0.0.1:${CG_TEST_PORT}\nupstreams:\n  - name: a\n"
        "    base_url: ${CG_TEST_UNSET:-http://localhost:1234/api/v1/}\n    api_key: "
        "${CG_TEST_UNSET}\n",
        "t.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    BOOST_TEST(loaded.value->server.listen.port == 9999);
    BOOST_TEST(loaded.value->upstreams[0].endpoint.host == "localhost");
    BOOST_TEST(loaded.value->upstreams[0].endpoint.port == 1234);
    BOOST_TEST(loaded.value->upstreams[0].endpoint.base_path == "/api/v1");
    BOOST_TEST(loaded.value->upstreams[0].api_key.empty());
    ::unsetenv("CG_TEST_PORT");
}

BOOST_AUTO_TEST_CASE(unknown_keys_name_file_line_and_key) {
    BOOST_TEST(
        error_of("server:\n  listn: 1.2.3.4:80\n") ==
        "test.yaml:2: unknown key `listn` in `server` (expected one of: listen, workers, "
        "header_limit, body_limit, header_timeout, body_timeout, keep_alive_timeout, "
        "write_timeout, drain_time, max_requests_per_connection, sse_heartbeat, websocket_tunnel, "
        "console, allowed_hosts)");
    BOOST_TEST(error_of(with_upstream("    api_kye: x\n"))
                   .starts_with("test.yaml:4: unknown key `api_kye` in `upstreams[0]`"));
    BOOST_TEST(error_of(minimal + "extra: 1\n")
                   .starts_with("test.yaml:9: unknown key `extra` in `top level`"));
    BOOST_TEST(error_of(minimal + "logging:\n  colour: red\n")
                   .starts_with("test.yaml:10: unknown key `colour` in `logging`"));
}

BOOST_AUTO_TEST_CASE(bad_values_are_precise) {
    BOOST_TEST(error_of(with_server("  listen: nowhere\n")) ==
               "test.yaml:2: `listen`: `nowhere` is not host:port");
    BOOST_TEST(error_of(with_server("  listen: 127.0.0.1:70000\n")) ==
               "test.yaml:2: `listen`: `127.0.0.1:70000` is not host:port");
    BOOST_TEST(error_of(with_server("  header_timeout: soon\n")) ==
               "test.yaml:2: `header_timeout`: `soon` is not a duration (use e.g. 250ms, 10s, 5m)");
    BOOST_TEST(error_of(with_server("  body_limit: 12XB\n")) ==
               "test.yaml:2: `body_limit`: `12XB` is not a size (use e.g. 65536, 64KiB, 32MiB)");
    BOOST_TEST(error_of(with_server("  workers: 1000\n")) ==
               "test.yaml:2: `workers`: `1000` must be a whole number from 0 to 256");
    BOOST_TEST(error_of(with_server("  websocket_tunnel: yes-please\n")) ==
               "test.yaml:2: `websocket_tunnel`: `yes-please` must be true or false");
    BOOST_TEST(error_of(with_server("  write_timeout: 0s\n")) ==
               "test.yaml:2: `write_timeout` must be positive");
    BOOST_TEST(error_of(with_server("  header_limit: 10\n")) ==
               "test.yaml:2: `header_limit` must be at least 1KiB");
    BOOST_TEST(error_of(with_upstream("    auth: steal\n")) ==
               "test.yaml:4: `auth`: `steal` must be forward or replace");
    BOOST_TEST(error_of(with_upstream("    auth: replace\n")) ==
               "test.yaml:4: upstreams[0]: `auth: replace` needs a non-empty `api_key`");
    BOOST_TEST(error_of(with_upstream("    models: []\n")) ==
               "test.yaml:4: `models` must be a non-empty list of model name globs");
    BOOST_TEST(error_of(with_upstream("    ca_file: /nonexistent/ca.pem\n")) ==
               "test.yaml:4: `ca_file`: cannot read `/nonexistent/ca.pem`");
    BOOST_TEST(
        error_of(with_upstream("    first_byte_timeout: 5 minutes\n"))
            .starts_with("test.yaml:4: `first_byte_timeout`: `5 minutes` is not a duration"));
    BOOST_TEST(error_of(minimal + "logging:\n  level: loud\n") ==
               "test.yaml:10: `level`: `loud` must be debug, info, warn or error");
}

BOOST_AUTO_TEST_CASE(upstream_structure_errors) {
    BOOST_TEST(error_of("server:\n  listen: 127.0.0.1:1\n") ==
               "test.yaml:1: `upstreams` is required: at least one upstream to forward to");
    BOOST_TEST(error_of("upstreams: []\n") == "test.yaml:1: `upstreams` must be a non-empty list");
    BOOST_TEST(error_of("upstreams:\n  - name: a\n") ==
               "test.yaml:2: upstreams[0]: `base_url` is required");
    BOOST_TEST(error_of("upstreams:\n  - base_url: http://x/v1\n") ==
               "test.yaml:2: upstreams[0]: `name` is required");
    BOOST_TEST(error_of("upstreams:\n  - name: a\n    base_url: ftp://x/v1\n") ==
               "test.yaml:3: `base_url`: `ftp://x/v1` scheme must be http or https, not `ftp`");
    BOOST_TEST(error_of("upstreams:\n  - name: a\n    base_url: not a url\n") ==
               "test.yaml:3: `base_url`: `not a url` not an absolute URL");
    BOOST_TEST(error_of("upstreams:\n  - name: a\n    base_url: http://h/v1\n  - name: a\n    "
                        "base_url: http://h/v1\n") == "test.yaml:4: duplicate upstream name `a`");
}

BOOST_AUTO_TEST_CASE(broken_yaml_and_empty_file) {
    BOOST_TEST(error_of("server: [unclosed\n").starts_with("test.yaml:2: "));
    BOOST_TEST(error_of("") == "test.yaml: the file is empty");
    BOOST_TEST(error_of("just a string\n") == "test.yaml:1: `top level` must be a mapping");
    BOOST_TEST(error_of("upstreams:\n  - name: a\n    base_url: ${UNTERMINATED\n") ==
               "test.yaml:3: unterminated `${` in `${UNTERMINATED`");
    auto missing = load_file("/nonexistent/gateway.yaml");
    BOOST_TEST(missing.error == "/nonexistent/gateway.yaml: cannot open the file");
}

BOOST_AUTO_TEST_CASE(effective_config_masks_secrets) {
    ::setenv("CG_TEST_KEY", "sk-secret-1234", 1);
    auto loaded = load_string(minimal, "test.yaml");
    ::unsetenv("CG_TEST_KEY");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded));
    auto text = to_yaml(*loaded.value);
    BOOST_TEST(text.find("sk-secret") == std::string::npos);
    BOOST_TEST(text.find("api_key: \"***\"") != std::string::npos);
    BOOST_TEST(text.find("listen: 127.0.0.1:8080") != std::string::npos);
    // The printed configuration is itself valid and means the same thing.
    auto again = load_string(text, "effective.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(again), again.error);
    BOOST_TEST(again.value->upstreams[0].endpoint.host == "api.openai.com");
    BOOST_TEST(again.value->server.drain_time.count() == loaded.value->server.drain_time.count());
}

BOOST_AUTO_TEST_CASE(context_section) {
    auto loaded = load_string(with_upstream("") + R"(context:
  data_dir: /var/lib/contextgate
  workspaces: ["/srv/projects", "/home/me/code"]
  api_keys: ["a-long-enough-gateway-key", "sha256:0000000000000000000000000000000000000000000000000000000000000000"]
  max_steps: 12
  max_wall_time: 2m
  approval_timeout: 30s
  approvals: {read_file: always, delete_file: never, edit_file: ask}
  max_message_bytes: 256KiB
  max_watchers_per_run: 4
  event_excerpt_bytes: 4KiB
)",
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& c = loaded.value->context;
    BOOST_TEST(c.max_message_bytes == 256u * 1024);
    BOOST_TEST(c.max_watchers_per_run == 4u);
    BOOST_TEST(c.event_excerpt_bytes == 4096u);
    BOOST_TEST(c.data_dir == "/var/lib/contextgate");
    BOOST_TEST(c.workspaces.size() == 2u);
    BOOST_TEST(c.max_steps == 12u);
    BOOST_TEST(c.max_wall_time.count() == 120000);
    BOOST_TEST(c.approvals.size() == 3u);
    BOOST_TEST((c.approvals[1].second == gateway::config::approval_policy::never));
    // check-config prints keys hashed: masked, and the output still loads.
    auto text = to_yaml(*loaded.value);
    BOOST_TEST(text.find("a-long-enough-gateway-key") == std::string::npos);
    BOOST_TEST(text.find(gateway::config::hashed_key("a-long-enough-gateway-key")) !=
               std::string::npos);
    auto again = load_string(text, "effective.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(again), again.error);
    BOOST_TEST(again.value->context.approvals.size() == 3u);
    BOOST_TEST(again.value->context.max_watchers_per_run == 4u);
    BOOST_TEST(again.value->upstreams[0].context_budget == 100'000u);
}

BOOST_AUTO_TEST_CASE(context_section_errors) {
    auto context = [](const std::string& lines) {
        return with_upstream("") + "context:\n" + lines;
    };
    BOOST_TEST(error_of(context("  workspaces: [relative/path]\n")) ==
               "test.yaml:5: `workspaces`: `relative/path` must be an absolute path");
    BOOST_TEST(error_of(context("  api_keys: [short]\n")) ==
               "test.yaml:5: `api_keys`: keys must be at least 16 characters");
    BOOST_TEST(error_of(context("  api_keys: [\"sha256:abc\"]\n")) ==
               "test.yaml:5: `api_keys`: a hashed key is `sha256:` and 64 lowercase hex digits");
    BOOST_TEST(error_of(context("  approvals: {edit_file: sometimes}\n")) ==
               "test.yaml:5: `approvals.edit_file`: `sometimes` must be always, never or ask");
    BOOST_TEST(error_of(context("  max_stepz: 3\n")).find("unknown key `max_stepz` in `context`") !=
               std::string::npos);
    BOOST_TEST(error_of(context("  max_steps: 0\n")).find("must be a whole number from 1") !=
               std::string::npos);
    BOOST_TEST(error_of(context("  event_excerpt_bytes: 10\n")) ==
               "test.yaml:5: `event_excerpt_bytes` must be at least 256");
    BOOST_TEST(error_of(context("  max_watchers_per_run: 0\n")).find("from 1 to 10000") !=
               std::string::npos);
    BOOST_TEST(error_of(context("  identical_call_warn: 5\n  identical_call_stop: 4\n"))
                   .find("`identical_call_stop` must be greater") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(value_parsers) {
    BOOST_TEST(parse_duration("250ms")->count() == 250);
    BOOST_TEST(parse_duration("10s")->count() == 10'000);
    BOOST_TEST(parse_duration("5m")->count() == 300'000);
    BOOST_TEST(parse_duration("1h")->count() == 3'600'000);
    BOOST_TEST(parse_duration("7")->count() == 7'000);
    BOOST_TEST(!parse_duration("-1s"));
    BOOST_TEST(!parse_duration("s"));
    BOOST_TEST(*parse_size("64KiB") == 65536u);
    BOOST_TEST(*parse_size("32MiB") == 32u << 20);
    BOOST_TEST(*parse_size("512") == 512u);
    BOOST_TEST(!parse_size("MiB"));
    BOOST_TEST(parse_listen("[::1]:80")->host == "::1");
    BOOST_TEST(parse_listen("0.0.0.0:0")->port == 0);
    BOOST_TEST(!parse_listen(":80"));
    auto e = parse_base_url("http://[::1]:8000/");
    BOOST_TEST_REQUIRE(static_cast<bool>(e), e.error);
    BOOST_TEST(e.value->host == "::1");
    BOOST_TEST(e.value->port == 8000);
    BOOST_TEST(e.value->base_path == "");
    BOOST_TEST(parse_base_url("https://user:pw@h/v1").error ==
               "must not contain credentials; use api_key");
    BOOST_TEST(parse_base_url("https://h/v1?x=1").error == "must not have a query or a fragment");
    // The error that quotes such a URL does not repeat its password.
    BOOST_TEST(error_of("upstreams:\n  - name: a\n    base_url: https://user:pw@h/v1\n") ==
               "test.yaml:3: `base_url`: `https://user:***@h/v1` must not contain credentials; "
               "use api_key");
}

BOOST_AUTO_TEST_CASE(a_bedrock_upstream_needs_a_region_which_gives_its_base_url) {
    const std::string bedrock = "upstreams:\n  - name: b\n    provider: bedrock\n";
    auto loaded = load_string(bedrock +
                                  "    region: eu-west-3\n    aws: {access_key_id: AKIDEXAMPLE, "
                                  "secret_access_key: wJalrXUtnFEMI, session_token: SESSIONTOK}\n",
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& u = loaded.value->upstreams[0];
    BOOST_TEST((u.provider == provider_kind::bedrock));
    BOOST_TEST(u.base_url == "https://bedrock-runtime.eu-west-3.amazonaws.com");
    BOOST_TEST(u.endpoint.host == "bedrock-runtime.eu-west-3.amazonaws.com");
    BOOST_TEST(u.endpoint.tls);
    BOOST_TEST(u.aws.secret_access_key == "wJalrXUtnFEMI");
    BOOST_TEST((u.tool_calling == tool_calling_mode::native));
    // Its keys are secrets in check-config, as api_key is.
    auto text = to_yaml(*loaded.value);
    BOOST_TEST(text.find("AKIDEXAMPLE") == std::string::npos, text);
    BOOST_TEST(text.find("wJalrXUtnFEMI") == std::string::npos, text);
    BOOST_TEST(text.find("SESSIONTOK") == std::string::npos, text);
    BOOST_TEST(text.find("aws: {access_key_id: \"***\", secret_access_key: \"***\", "
                         "session_token: \"***\"}") != std::string::npos,
               text);
    BOOST_TEST(text.find("region: \"eu-west-3\"") != std::string::npos, text);
    // A base_url of its own (a VPC endpoint, a test) wins.
    auto own = load_string(bedrock + "    region: us-east-1\n    base_url: http://127.0.0.1:9001\n",
                           "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(own), own.error);
    BOOST_TEST(own.value->upstreams[0].endpoint.port == 9001);

    BOOST_TEST(error_of(bedrock) ==
               "test.yaml:2: upstreams[0]: `provider: bedrock` needs `region` "
               "(e.g. us-east-1): its requests are signed for it");
    BOOST_TEST(error_of(bedrock + "    region: US East\n") ==
               "test.yaml:4: upstreams[0]: `region`: `US East` is no AWS region name (such as "
               "us-east-1)");
    BOOST_TEST(
        error_of(bedrock + "    region: us-east-1\n    api_key: k\n")
            .starts_with("test.yaml:5: upstreams[0]: a Bedrock upstream takes no `api_key`"));
    BOOST_TEST(error_of(bedrock + "    region: us-east-1\n    aws: {access_key_id: AKID}\n") ==
               "test.yaml:5: `aws` needs both `access_key_id` and `secret_access_key`, or neither");
    BOOST_TEST(error_of(bedrock + "    region: us-east-1\n    aws: {acess_key_id: AKID}\n")
                   .starts_with("test.yaml:5: unknown key `acess_key_id` in `upstreams[0].aws`"));
    BOOST_TEST(error_of(with_upstream("    region: us-east-1\n")) ==
               "test.yaml:4: upstreams[0]: `region` and `aws` are for `provider: bedrock`");
    BOOST_TEST(
        error_of("upstreams:\n  - name: a\n").ends_with("upstreams[0]: `base_url` is required"));
}

BOOST_AUTO_TEST_CASE(a_vertex_upstream_needs_a_project_and_a_location_which_gives_its_base_url) {
    const std::string vertex = "upstreams:\n  - name: v\n    provider: vertex\n";
    auto loaded =
        load_string(vertex + "    project: my-project\n    location: us-east5\n", "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& u = loaded.value->upstreams[0];
    // Gemini's dialect, hosted by Vertex (claude-* speaks Anthropic's: config::dialect_for).
    BOOST_TEST((u.provider == provider_kind::gemini));
    BOOST_TEST((u.host == hosting::vertex));
    BOOST_TEST((u.tool_calling == tool_calling_mode::native));
    BOOST_TEST(u.base_url == "https://us-east5-aiplatform.googleapis.com");
    BOOST_TEST(u.endpoint.host == "us-east5-aiplatform.googleapis.com");
    BOOST_TEST(u.endpoint.tls);
    BOOST_TEST(u.endpoint.base_path == "");
    auto text = to_yaml(*loaded.value);
    BOOST_TEST(text.find("provider: vertex") != std::string::npos, text);
    BOOST_TEST(text.find("project: \"my-project\"") != std::string::npos, text);
    BOOST_TEST(text.find("location: \"us-east5\"") != std::string::npos, text);
    // Global has no region in its host; a base_url of its own (a test, a proxy) wins.
    auto global = load_string(vertex + "    project: p-1\n    location: global\n", "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(global), global.error);
    BOOST_TEST(global.value->upstreams[0].base_url == "https://aiplatform.googleapis.com");
    auto own = load_string(
        vertex + "    project: p-1\n    location: global\n    base_url: http://127.0.0.1:9002\n",
        "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(own), own.error);
    BOOST_TEST(own.value->upstreams[0].endpoint.port == 9002);

    BOOST_TEST(error_of(vertex + "    location: us-east5\n") ==
               "test.yaml:2: upstreams[0]: `provider: vertex` needs `project` (the Google Cloud "
               "project id)");
    BOOST_TEST(error_of(vertex + "    project: p-1\n") ==
               "test.yaml:2: upstreams[0]: `provider: vertex` needs `location` (e.g. us-east5, or "
               "global)");
    BOOST_TEST(error_of(vertex + "    project: My Project\n    location: us-east5\n") ==
               "test.yaml:4: upstreams[0]: `project`: `My Project` is no Google Cloud project id "
               "(lowercase letters, digits and hyphens)");
    BOOST_TEST(error_of(vertex + "    project: p-1\n    location: US East\n") ==
               "test.yaml:5: upstreams[0]: `location`: `US East` is no Vertex AI location (such "
               "as us-east5 or global)");
    BOOST_TEST(error_of(vertex + "    project: p-1\n    location: global\n    api_key: k\n")
                   .starts_with("test.yaml:6: upstreams[0]: a Vertex AI upstream takes no "
                                "`api_key`"));
    BOOST_TEST(error_of(with_upstream("    project: p-1\n")) ==
               "test.yaml:4: upstreams[0]: `project` and `location` are for `provider: vertex`");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(config_providers)

BOOST_AUTO_TEST_CASE(providers_default_their_tool_calling_and_map_model_names) {
    auto loaded = load_string(R"(upstreams:
  - name: claude
    base_url: https://api.anthropic.com
    provider: anthropic
    models: ["claude-*"]
    model_map:
      claude: claude-sonnet-4-5
  - name: gemini
    base_url: https://generativelanguage.googleapis.com/v1beta
    provider: gemini
    tool_calling: json
  - name: local
    base_url: http://127.0.0.1:9/v1
)",
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& u = loaded.value->upstreams;
    BOOST_TEST((u[0].provider == provider_kind::anthropic));
    BOOST_TEST((u[0].tool_calling == tool_calling_mode::native));
    BOOST_TEST_REQUIRE(u[0].model_map.size() == 1u);
    BOOST_TEST(u[0].model_map[0].second == "claude-sonnet-4-5");
    BOOST_TEST((u[1].tool_calling == tool_calling_mode::json));
    BOOST_TEST((u[2].provider == provider_kind::openai));
    BOOST_TEST((u[2].tool_calling == tool_calling_mode::json));
    auto printed = to_yaml(*loaded.value);
    BOOST_TEST(printed.find("provider: anthropic") != std::string::npos);
    BOOST_TEST(printed.find("\"claude\": \"claude-sonnet-4-5\"") != std::string::npos, printed);
}

BOOST_AUTO_TEST_CASE(an_azure_upstream_needs_an_api_version_and_https) {
    const std::string azure =
        "upstreams:\n  - name: az\n    provider: azure\n"
        "    base_url: https://res.openai.azure.com\n";
    auto loaded = load_string(azure +
                                  "    api_key: azure-key-0123456789\n    api_version: 2024-10-21\n"
                                  "    deployments: {gpt-4o: prod-gpt4o}\n",
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& u = loaded.value->upstreams[0];
    // OpenAI's dialect, hosted by Azure; GPT models call tools natively.
    BOOST_TEST((u.provider == provider_kind::openai));
    BOOST_TEST((u.host == hosting::azure));
    BOOST_TEST((u.tool_calling == tool_calling_mode::native));
    BOOST_TEST(u.api_version == "2024-10-21");
    BOOST_TEST_REQUIRE(u.deployments.size() == 1u);
    BOOST_TEST(u.deployments[0].second == "prod-gpt4o");
    auto text = to_yaml(*loaded.value);
    BOOST_TEST(text.find("provider: azure") != std::string::npos, text);
    BOOST_TEST(text.find("api_version: \"2024-10-21\"") != std::string::npos, text);
    BOOST_TEST(text.find("deployments: {\"gpt-4o\": \"prod-gpt4o\"}") != std::string::npos, text);
    BOOST_TEST(text.find("azure-key-0123456789") == std::string::npos, text);
    // The v1 API; plain http to a loopback address (tests).
    auto v1 = load_string(
        "upstreams:\n  - name: az\n    provider: azure\n"
        "    base_url: http://127.0.0.1:9003\n    api_version: v1\n",
        "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(v1), v1.error);

    BOOST_TEST(error_of(azure) ==
               "test.yaml:2: upstreams[0]: `provider: azure` needs `api_version` (such as "
               "2024-10-21 for the deployments API, or v1 for the v1 API)");
    BOOST_TEST(error_of("upstreams:\n  - name: az\n    provider: azure\n"
                        "    base_url: http://res.openai.azure.com\n    api_version: v1\n") ==
               "test.yaml:4: upstreams[0]: `base_url`: an Azure upstream is reached over https "
               "(such as https://my-resource.openai.azure.com)");
    BOOST_TEST(error_of(azure + "    api_version: v1\n    deployments: {gpt-4o: prod}\n")
                   .starts_with("test.yaml:6: upstreams[0]: `deployments` are for the "
                                "deployments API"));
    BOOST_TEST(error_of(azure + "    api_version: v1\n    deployments: [gpt-4o]\n") ==
               "test.yaml:6: `deployments` must map model names to Azure deployment names");
    BOOST_TEST(error_of(with_upstream("    api_version: 2024-10-21\n")) ==
               "test.yaml:4: upstreams[0]: `api_version` and `deployments` are for `provider: "
               "azure`");
}

BOOST_AUTO_TEST_CASE(bad_provider_settings_are_precise) {
    BOOST_TEST(error_of(with_upstream("    provider: mistral\n")) ==
               "test.yaml:4: `provider`: `mistral` must be openai, anthropic, gemini, bedrock, "
               "vertex or azure");
    BOOST_TEST(error_of(with_upstream("    tool_calling: sometimes\n")) ==
               "test.yaml:4: `tool_calling`: `sometimes` must be native or json");
    BOOST_TEST(error_of(with_upstream("    model_map: [a, b]\n")) ==
               "test.yaml:4: `model_map` must map client model names to upstream names");
}

BOOST_AUTO_TEST_CASE(operations_sections_load_and_print_masked) {
    auto loaded = load_string(with_upstream("    stream_usage: inject\n") + R"(metrics:
  listen: 127.0.0.1:0
  key_labels: true
logging:
  format: json
admin:
  api_key: admin-key-0123456789
  keys:
    - name: ci
      key: sk-ci-0123456789abcdef
      models: ["gpt-*"]
      rpm: 60
      tpm: 10000
      max_parallel: 2
      budget: {usd: 12.5, tokens: 500000, period: week}
      expires_at: 2027-01-31
  budget_default_output_tokens: 2048
  budget_alerts: {thresholds: [75, 100], webhook: "https://hooks.example.com/T0/secret-path", timeout: 2s}
limits:
  backend: redis
  redis_url: redis://:secret@127.0.0.1:6390/2
)",
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& c = *loaded.value;
    BOOST_TEST(c.upstreams[0].inject_stream_usage);
    BOOST_TEST(c.metrics.listen.has_value());
    BOOST_TEST(c.metrics.key_labels);
    BOOST_TEST((c.logging.format == log_format::json));
    BOOST_TEST_REQUIRE(c.admin.keys.size() == 1u);
    const auto& k = c.admin.keys[0];
    BOOST_TEST(k.id == "cfg-ci");
    BOOST_TEST(k.rpm == 60u);
    BOOST_TEST(k.budget_tokens == 500000u);
    BOOST_TEST(k.budget_usd_nano == 12'500'000'000u);
    BOOST_TEST((k.budget_period == budget_period::week));
    BOOST_TEST(c.admin.budget_default_output_tokens == 2048u);
    BOOST_TEST((c.admin.budget_alerts.thresholds == std::vector<unsigned>{75, 100}));
    BOOST_TEST(c.admin.budget_alerts.endpoint.host == "hooks.example.com");
    BOOST_TEST(c.admin.budget_alerts.timeout == duration(2000));
    BOOST_TEST(k.expires_at == *parse_time("2027-01-31T00:00:00Z"));
    BOOST_TEST((c.limits.backend == limits_backend::redis));
    auto text = to_yaml(c);
    BOOST_TEST(text.find("sk-ci-0123456789abcdef") == std::string::npos);
    BOOST_TEST(text.find("admin-key-0123456789") == std::string::npos);
    // The webhook's path and the Redis password (a key named client_secret is printed, its
    // value masked).
    BOOST_TEST(text.find("secret-path") == std::string::npos);
    BOOST_TEST(text.find(":secret@") == std::string::npos);
    BOOST_TEST(text.find("redis://:***@127.0.0.1:6390/2") != std::string::npos);
    BOOST_TEST(text.find("budget: {usd: 12.50, tokens: 500000, period: week}") != std::string::npos,
               text);
    auto again = load_string(text, "effective.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(again), again.error + "\n" + text);
    BOOST_TEST(again.value->admin.keys.at(0).digest == hashed_key("sk-ci-0123456789abcdef"));
}

BOOST_AUTO_TEST_CASE(context_store_is_sqlite_by_default_or_postgres_with_a_dsn) {
    auto plain = load_string(with_upstream(""), "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(plain), plain.error);
    BOOST_TEST((plain.value->context.store.type == store_type::sqlite));
    ::setenv("CG_TEST_DATABASE_URL", "postgres://gw:hunter2@db.internal:5432/contextgate", 1);
    auto loaded = load_string(with_upstream("") +
                                  "context:\n  store:\n    type: postgres\n"
                                  "    dsn: ${CG_TEST_DATABASE_URL}\n    lease_timeout: 20s\n",
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& store = loaded.value->context.store;
    BOOST_TEST((store.type == store_type::postgres));
    BOOST_TEST(store.dsn == "postgres://gw:hunter2@db.internal:5432/contextgate");
    BOOST_TEST(store.lease_timeout.count() == 20'000);
    auto text = to_yaml(*loaded.value);
    BOOST_TEST(text.find("hunter2") == std::string::npos, text);
    BOOST_TEST(text.find("postgres://gw:***@db.internal:5432/contextgate") != std::string::npos);
    auto again = load_string(text, "effective.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(again), again.error + "\n" + text);
    BOOST_TEST((again.value->context.store.type == store_type::postgres));
}

BOOST_AUTO_TEST_CASE(context_store_refuses_what_cannot_work) {
    ::unsetenv("CG_TEST_UNSET_URL");
    BOOST_TEST(error_of(with_upstream("") + "context:\n  store: {type: postgres}\n") ==
               "test.yaml:5: `context.store.type: postgres` needs `dsn: "
               "postgres://user:password@host:port/database` (is the variable it names set?)");
    BOOST_TEST(error_of(with_upstream("") +
                        "context:\n  store: {type: postgres, dsn: \"${CG_TEST_UNSET_URL}\"}\n")
                   .find("needs `dsn: postgres://") != std::string::npos);
    BOOST_TEST(error_of(with_upstream("") + "context:\n  store: {type: mysql}\n") ==
               "test.yaml:5: `context.store.type`: `mysql` must be sqlite or postgres");
    BOOST_TEST(error_of(with_upstream("") +
                        "context:\n  store: {type: postgres, dsn: \"postgres://h/db\", "
                        "lease_timeout: 100ms}\n") ==
               "test.yaml:5: `context.store.lease_timeout` must be at least 1s");
    BOOST_TEST(error_of(with_upstream("") + "context:\n  store: {kind: postgres}\n")
                   .find("unknown key `kind` in `context.store`") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(tracing_loads_with_its_endpoint_and_prints_masked) {
    auto loaded = load_string(with_upstream("") +
                                  "tracing:\n  otlp_endpoint: https://collector.example:4318\n"
                                  "  sample_ratio: 0.25\n  capture_content: true\n"
                                  "  headers: {x-api-key: secret-value}\n",
                              "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(loaded), loaded.error);
    const auto& t = loaded.value->tracing;
    BOOST_TEST(t.endpoint.tls);
    BOOST_TEST(t.endpoint.host == "collector.example");
    BOOST_TEST(t.endpoint.port == 4318);
    BOOST_TEST(t.endpoint.base_path == "/v1/traces");  // OTLP/HTTP's path below the base
    BOOST_TEST(t.sample_ratio == 0.25);
    BOOST_TEST(t.capture_content);
    BOOST_TEST(t.export_interval == 2s);
    auto printed = to_yaml(*loaded.value);
    BOOST_TEST(printed.find("sample_ratio: 0.25") != std::string::npos);
    BOOST_TEST(printed.find("secret-value") == std::string::npos);

    auto own_path = load_string(
        with_upstream("") + "tracing:\n  otlp_endpoint: http://127.0.0.1:4318/otlp/traces\n",
        "test.yaml");
    BOOST_TEST_REQUIRE(static_cast<bool>(own_path), own_path.error);
    BOOST_TEST(own_path.value->tracing.endpoint.base_path == "/otlp/traces");
    BOOST_TEST(load_string(with_upstream(""), "test.yaml").value->tracing.otlp_endpoint.empty());
}

BOOST_AUTO_TEST_CASE(tracing_refuses_what_cannot_work) {
    BOOST_TEST(error_of(with_upstream("") + "tracing:\n  sample_ratio: 1.5\n") ==
               "test.yaml:5: `sample_ratio` must be a number from 0 to 1, such as 0.25");
    BOOST_TEST(error_of(with_upstream("") + "tracing:\n  sample_ratio: half\n") ==
               "test.yaml:5: `sample_ratio` must be a number from 0 to 1, such as 0.25");
    BOOST_TEST(error_of(with_upstream("") + "tracing:\n  otlp_endpoint: grpc://c:4317\n") ==
               "test.yaml:5: `tracing.otlp_endpoint`: `grpc://c:4317` scheme must be http or "
               "https, not `grpc` (such as http://127.0.0.1:4318)");
    BOOST_TEST(
        error_of(with_upstream("") + "tracing:\n  otlp_endpoint: http://u:secret@c:4318\n") ==
        "test.yaml:5: `tracing.otlp_endpoint`: `http://u:***@c:4318` must not contain "
        "credentials; send them in `tracing.headers`");
    BOOST_TEST(
        error_of(with_upstream("") + "tracing:\n  export_interval: 0s\n").find("export_interval") !=
        std::string::npos);
    BOOST_TEST(
        error_of(with_upstream("") + "tracing:\n  sampling: 1\n").find("unknown key `sampling`") !=
        std::string::npos);
}

BOOST_AUTO_TEST_CASE(operations_sections_refuse_bad_values) {
    BOOST_TEST(error_of(with_upstream("") + "admin:\n  keys:\n    - name: a\n      key: short\n") ==
               "test.yaml:7: `admin.keys[0].key`: keys must be at least 16 characters");
    BOOST_TEST(error_of(with_upstream("") +
                        "admin:\n  keys:\n    - name: a\n      key: 0123456789abcdefgh\n"
                        "      budget: {tokens: 5, period: year}\n") ==
               "test.yaml:8: `budget.period`: `year` must be day, week or month");
    for (const auto* usd : {"-1", "1.0000000001", "abc", "1e3", "2000000", ".5", "5."})
        BOOST_TEST(error_of(with_upstream("") +
                            "admin:\n  keys:\n    - name: a\n      key: 0123456789abcdefgh\n"
                            "      budget: {usd: \"" +
                            std::string(usd) + "\"}\n") ==
                       "test.yaml:8: `budget.usd`: `" + std::string(usd) +
                           "` must be an amount of USD such as 25.00 (up to 9 decimals)",
                   usd);
    BOOST_TEST(error_of(with_upstream("") + "admin:\n  budget_alerts: {thresholds: [80, 50]}\n") ==
               "test.yaml:5: `thresholds` must be ascending, each once");
    BOOST_TEST(error_of(with_upstream("") + "admin:\n  budget_alerts: {thresholds: [0]}\n") ==
               "test.yaml:5: `thresholds`: `0` must be a whole number from 1 to 100");
    BOOST_TEST(error_of(with_upstream("") + "admin:\n  budget_alerts: {webhook: \"ftp://x\"}\n")
                   .find("`budget_alerts.webhook`") != std::string::npos);
    BOOST_TEST(error_of(with_upstream("") + "limits:\n  backend: redis\n") ==
               "test.yaml:5: `limits.backend: redis` needs `redis_url: redis://host:port`");
    BOOST_TEST(error_of(with_upstream("") + "logging:\n  format: xml\n") ==
               "test.yaml:5: `format`: `xml` must be text or json");
    BOOST_TEST(error_of(with_upstream("    stream_usage: always\n")) ==
               "test.yaml:4: `stream_usage`: `always` must be pass or inject");
}

// One rule for the file and /admin/keys (which calls the same function).
BOOST_AUTO_TEST_CASE(key_names_are_letters_digits_and_three_marks) {
    for (auto good : {"a", "team-a.prod_1", "A9", "x.y-z_0"})
        BOOST_TEST(valid_key_name(good), good);
    BOOST_TEST(valid_key_name(std::string(64, 'k')));
    for (std::string bad :
         {"", "two words", "<b>x</b>", "a\r\nb", "evil\u202Egnp", "caf\u00e9", "a/b"})
        BOOST_TEST(!valid_key_name(bad), bad);
    BOOST_TEST(!valid_key_name(std::string(65, 'k')));
    BOOST_TEST(error_of(with_upstream("") +
                        "admin:\n  keys:\n    - name: \"<b>\"\n      key: 0123456789abcdefgh\n") ==
               "test.yaml:6: admin.keys[0]: `name` must be 1-64 letters, digits, `_`, `-`, `.`");
}

BOOST_AUTO_TEST_CASE(times_parse_as_utc) {
    BOOST_TEST(*parse_time("1970-01-02") == 86'400'000);
    BOOST_TEST(*parse_time("2026-11-23T10:00:00Z") == 1'795'428'000'000);
    BOOST_TEST(*parse_time("2026-11-23T12:00:00+02:00") == 1'795'428'000'000);
    BOOST_TEST(*parse_time("2026-11-23T10:00:00.25Z") == 1'795'428'000'250);
    for (auto bad : {"2026-02-30", "2026-11-23T10:00:00", "tomorrow", "2026-11-23T25:00:00Z"})
        BOOST_TEST(!parse_time(bad).has_value(), bad);
    BOOST_TEST(format_time(1'795'428'000'000) == "2026-11-23T10:00:00Z");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(mcp_servers_config)

BOOST_AUTO_TEST_CASE(stdio_and_http_servers_load_with_their_settings) {
    ::setenv("CG_TEST_MCP_TOKEN", "tok-123", 1);
    auto loaded = load_string(minimal + R"(mcp_servers:
  - name: everything
    transport: stdio
    command: npx
    args: ["-y", "@modelcontextprotocol/server-everything"]
    env: {LOG: debug}
    tools: {allow: ["get-*"], deny: ["get-env"]}
    approval: always
    call_timeout: 5s
    max_output_bytes: 8KiB
  - name: web
    transport: http
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ${CG_TEST_MCP_TOKEN}"}
)",
                              "test.yaml");
    BOOST_TEST_REQUIRE(loaded.error == "");
    const auto& servers = loaded.value->mcp_servers;
    BOOST_TEST_REQUIRE(servers.size() == 2u);
    BOOST_TEST((servers[0].transport == mcp_transport::stdio));
    BOOST_TEST(servers[0].args.size() == 2u);
    BOOST_TEST(servers[0].env[0].second == "debug");
    BOOST_TEST(servers[0].allow[0] == "get-*");
    BOOST_TEST(servers[0].deny[0] == "get-env");
    BOOST_TEST((servers[0].approval == approval_policy::always));
    BOOST_TEST(servers[0].call_timeout.count() == 5000);
    BOOST_TEST(servers[0].max_output_bytes == 8192u);
    BOOST_TEST((servers[1].transport == mcp_transport::http));
    BOOST_TEST(servers[1].endpoint.tls);
    BOOST_TEST(servers[1].endpoint.base_path == "/mcp");
    BOOST_TEST(servers[1].headers[0].second == "Bearer tok-123");
    BOOST_TEST((servers[1].approval == approval_policy::ask));  // the default
    BOOST_TEST(servers[1].allow[0] == "*");
    // check-config shows neither header values nor environment values.
    auto shown = to_yaml(*loaded.value);
    BOOST_TEST(shown.find("tok-123") == std::string::npos);
    BOOST_TEST(shown.find("\"Authorization\": \"***\"") != std::string::npos);
    BOOST_TEST(shown.find("\"LOG\": \"***\"") != std::string::npos);
    auto again = load_string(shown, "again.yaml");
    BOOST_TEST(again.error == "");
}

BOOST_AUTO_TEST_CASE(routes_name_their_targets_and_print_back) {
    const std::string yaml = R"(upstreams:
  - name: openai-a
    base_url: http://127.0.0.1:9/v1
  - name: openai-b
    base_url: http://127.0.0.1:10/v1
    models: ["gpt-4o*"]
  - name: claude
    provider: anthropic
    base_url: http://127.0.0.1:11
routes:
  - model: "smart"
    strategy: weighted
    targets:
      - {upstream: openai-a, model: gpt-5}
      - {upstream: openai-b, weight: 3}
    max_attempts: 2
    first_byte_timeout: 20s
    deadline: 2m
    on_context_window: [{upstream: claude, model: claude-sonnet-4-5}]
  - model: "claude-*"
    targets: [{upstream: claude}]
health:
  cooldown: 2s
  max_cooldown: 1m
)";
    auto loaded = load_string(yaml, "test.yaml");
    BOOST_TEST_REQUIRE(loaded.error == "");
    const auto& c = *loaded.value;
    BOOST_TEST_REQUIRE(c.routes.size() == 2u);
    const auto& smart = c.routes[0];
    BOOST_TEST((smart.strategy == route_strategy::weighted));
    BOOST_TEST_REQUIRE(smart.targets.size() == 2u);
    BOOST_TEST(smart.targets[0].model == "gpt-5");
    BOOST_TEST(smart.targets[1].index == 1u);
    BOOST_TEST(smart.targets[1].weight == 3u);
    BOOST_TEST(smart.targets[1].model == "");  // the client's name
    BOOST_TEST(smart.max_attempts == 2u);
    BOOST_TEST(smart.first_byte_timeout.count() == 20'000);
    BOOST_TEST(smart.deadline.count() == 120'000);
    BOOST_TEST(smart.on_context_window.at(0).index == 2u);
    BOOST_TEST((c.routes[1].strategy == route_strategy::priority));  // the default
    BOOST_TEST(c.routes[1].max_attempts == 3u);
    BOOST_TEST(c.health.cooldown.count() == 2'000);
    // Used only as route targets, upstreams without `models` take no model names of their own;
    // one that gives them keeps them.
    BOOST_TEST(c.upstreams[0].models.empty());
    BOOST_TEST(c.upstreams[2].models.empty());
    BOOST_TEST(c.upstreams[1].models == std::vector<std::string>{"gpt-4o*"});
    auto again = load_string(to_yaml(c), "again.yaml");
    BOOST_TEST_REQUIRE(again.error == "");
    BOOST_TEST(to_yaml(*again.value) == to_yaml(c));
    BOOST_TEST(again.value->routes[0].targets[1].weight == 3u);
}

BOOST_AUTO_TEST_CASE(route_mistakes_name_the_line) {
    auto route = [](const std::string& lines) { return minimal + "routes:\n" + lines; };
    BOOST_TEST(error_of(route("  - model: smart\n    targets: [{upstream: nowhere}]\n")) ==
               "test.yaml:11: routes[0].targets[0]: there is no upstream named `nowhere`");
    BOOST_TEST(error_of(route("  - model: smart\n")) ==
               "test.yaml:10: routes[0]: `targets` is required");
    BOOST_TEST(error_of(route("  - model: smart\n    targets: []\n")) ==
               "test.yaml:11: `routes[0].targets` must be a non-empty list of {upstream, model, "
               "weight}");
    BOOST_TEST(error_of(route("  - targets: [{upstream: openai}]\n")) ==
               "test.yaml:10: routes[0]: `model` is required");
    BOOST_TEST(error_of(route("  - model: smart\n    targets: [{model: x}]\n")) ==
               "test.yaml:11: routes[0].targets[0]: `upstream` is required");
    BOOST_TEST(error_of(route("  - model: smart\n    strategy: random\n    targets: "
                              "[{upstream: openai}]\n"))
                   .find("`strategy`: `random` must be") != std::string::npos);
    BOOST_TEST(error_of(route("  - model: smart\n    targets: [{upstream: openai, wieght: 2}]\n"))
                   .find("unknown key `wieght` in `routes[0].targets[0]`") != std::string::npos);
    BOOST_TEST(error_of(route("  - model: smart\n    max_attempts: 0\n    targets: "
                              "[{upstream: openai}]\n"))
                   .find("max_attempts") != std::string::npos);
    BOOST_TEST(error_of(minimal + "health:\n  cooldown: 10s\n  max_cooldown: 1s\n") ==
               "test.yaml:10: `health.max_cooldown` must not be shorter than `health.cooldown`");
}

BOOST_AUTO_TEST_CASE(mistakes_name_the_line) {
    auto base = minimal + "mcp_servers:\n";
    BOOST_TEST(error_of(base + "  - name: a.b\n    transport: stdio\n    command: x\n")
                   .starts_with("test.yaml:10: mcp_servers[0]: `name` must be 1-24 letters"));
    BOOST_TEST(error_of(base + "  - name: a__b\n    transport: stdio\n    command: x\n")
                   .find("(no `__`)") != std::string::npos);
    BOOST_TEST(error_of(base + "  - name: a\n    transport: pipe\n") ==
               "test.yaml:11: `transport`: `pipe` must be stdio or http");
    BOOST_TEST(error_of(base + "  - name: a\n    transport: stdio\n") ==
               "test.yaml:10: mcp_servers[0]: `transport: stdio` needs `command`");
    BOOST_TEST(error_of(base + "  - name: a\n    transport: http\n    url: ftp://x\n")
                   .starts_with("test.yaml:12: `url`: `ftp://x`"));
    BOOST_TEST(error_of(base + "  - name: a\n    transport: http\n    url: http://x/mcp\n"
                               "    command: y\n") ==
               "test.yaml:13: mcp_servers[0]: `command`, `args` and `env` are for `transport: "
               "stdio`");
    BOOST_TEST(error_of(base + "  - name: a\n    transport: stdio\n    command: x\n"
                               "    approval: maybe\n") ==
               "test.yaml:13: `approval`: `maybe` must be always, never or ask");
    BOOST_TEST(error_of(base + "  - name: a\n    transport: stdio\n    command: x\n"
                               "    tools: {only: [x]}\n")
                   .find("unknown key `only` in `mcp_servers[0].tools`") != std::string::npos);
    BOOST_TEST(error_of(base + "  - name: a\n    transport: stdio\n    command: x\n"
                               "  - name: a\n    transport: stdio\n    command: y\n") ==
               "test.yaml:13: duplicate MCP server name `a`");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(mcp_serve_config)

BOOST_AUTO_TEST_CASE(the_mcp_section_loads_and_shows_again) {
    auto loaded = load_string(minimal + R"(mcp:
  serve: true
  model: gpt-4o
  workspace: /srv/code
  system_prompt: writing
  edits: review
  allowed_hosts: [Gateway.Example.com]
)",
                              "test.yaml");
    BOOST_TEST_REQUIRE(loaded.error == "");
    const auto& m = loaded.value->mcp;
    BOOST_TEST(m.serve);
    BOOST_TEST(m.model == "gpt-4o");
    BOOST_TEST(m.workspace == "/srv/code");
    BOOST_TEST(m.system_prompt == "writing");
    BOOST_TEST((m.edits == gateway::edit_mode::review));
    BOOST_TEST(m.allowed_hosts[0] == "Gateway.Example.com");
    auto again = load_string(to_yaml(*loaded.value), "again.yaml");
    BOOST_TEST_REQUIRE(again.error == "");
    BOOST_TEST((again.value->mcp.edits == gateway::edit_mode::review));
    BOOST_TEST(again.value->mcp.allowed_hosts == m.allowed_hosts);
    // Off by default.
    BOOST_TEST(!load_string(minimal, "test.yaml").value->mcp.serve);
}

BOOST_AUTO_TEST_CASE(mistakes_name_the_line) {
    BOOST_TEST(error_of(minimal + "mcp:\n  serve: true\n") ==
               "test.yaml:10: `mcp.serve: true` needs `mcp.model`: the model the workflows' chats "
               "use");
    BOOST_TEST(error_of(minimal + "mcp:\n  serve: true\n  model: m\n  edits: ask\n") ==
               "test.yaml:12: `mcp.edits`: `ask` must be approve or review");
    BOOST_TEST(error_of(minimal + "mcp:\n  port: 3\n").find("unknown key `port` in `mcp`") !=
               std::string::npos);
    BOOST_TEST(error_of(minimal + "mcp:\n  serve: maybe\n").starts_with("test.yaml:10:"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace config_config_test
