<?php
// app.php: the PHP-FPM + mysqli peer of svc-app for bench/app/run.sh: the same work for the same three
// requests on the same tables (schema/023_app_backend.sql): an owner's page of 20 records, a create
// validated against the declared fields, and a sign-in (Argon2id, a new session, the cookie).
// Project and environment come from the environment (BENCH_PROJECT), the database from SVC_DB_*.
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
$db = new mysqli('p:localhost', getenv('SVC_DB_USER'), '', getenv('SVC_DB_NAME'), 0, getenv('SVC_DB_SOCKET'));
$project = getenv('BENCH_PROJECT');
$env = 'live';
$path = $_SERVER['PATH_INFO'] ?? '';
header('Content-Type: application/json');
header('Cache-Control: no-store');

function fail($status, $code, $msg, $field = null) {
    http_response_code($status);
    $e = ['error' => $code, 'message' => $msg];
    if ($field !== null) $e['field'] = $field;
    echo json_encode($e);
    exit;
}

function record($r) {
    $o = json_decode($r['fields'], true) ?: [];
    $o['id'] = $r['id'];
    $o['owner'] = $r['owner'];
    $o['createdAt'] = gmdate('Y-m-d\TH:i:s', strtotime($r['created_at'] . ' UTC')) . '.000Z';
    $o['updatedAt'] = gmdate('Y-m-d\TH:i:s', strtotime($r['updated_at'] . ' UTC')) . '.000Z';
    return $o;
}

function session_user($db, $project, $env) {
    $tok = $_COOKIE['svc_app_session'] ?? '';
    if (strncmp($tok, 'svca_', 5) !== 0) return null;
    $st = $db->prepare('SELECT u.id FROM app_sessions s JOIN app_users u ON u.id = s.user_id WHERE s.token_sha256 = ? '
        . 'AND s.project_id = ? AND s.env = ? AND s.expires_at > UTC_TIMESTAMP(3) AND u.disabled = 0');
    $h = hash('sha256', $tok);
    $st->bind_param('sss', $h, $project, $env);
    $st->execute();
    $row = $st->get_result()->fetch_row();
    return $row ? $row[0] : null;
}

$method = $_SERVER['REQUEST_METHOD'];
if ($method !== 'GET' && ($_SERVER['HTTP_ORIGIN'] ?? '') === '' && !isset($_SERVER['HTTP_X_SVC_CLIENT']))
    fail(403, 'forbidden', 'Cross-site request refused.');
if ($path === '/data/todos' && $method === 'GET') {
    $uid = session_user($db, $project, $env);
    if (!$uid) fail(401, 'unauthorized', 'Sign in to do this.');
    $st = $db->prepare('SELECT id, owner, fields, created_at, updated_at FROM app_records WHERE project_id = ? AND env = ? '
        . 'AND collection = \'todos\' AND owner = ? ORDER BY created_at, id LIMIT 21');
    $st->bind_param('sss', $project, $env, $uid);
    $st->execute();
    $rows = $st->get_result()->fetch_all(MYSQLI_ASSOC);
    $items = array_map('record', array_slice($rows, 0, 20));
    $next = count($rows) > 20 ? bin2hex('a ' . $rows[19]['created_at'] . '|' . $rows[19]['id']) : null;
    echo json_encode(['items' => $items, 'nextCursor' => $next]);
} elseif ($path === '/data/todos' && $method === 'POST') {
    $uid = session_user($db, $project, $env);
    if (!$uid) fail(401, 'unauthorized', 'Sign in to do this.');
    $b = json_decode(file_get_contents('php://input'), true, 32);
    if (!is_array($b)) fail(400, 'invalid_json', 'The body is not a JSON object.');
    foreach ($b as $k => $v) if ($k !== 'title' && $k !== 'done') fail(400, 'validation_failed', "$k is not a field", $k);
    // characters, as svc counts them (code points; no mbstring needed)
    if (!isset($b['title']) || !is_string($b['title']) || $b['title'] === '' || !preg_match('//u', $b['title'])
        || preg_match_all('/./us', $b['title']) > 200)
        fail(400, 'validation_failed', 'title is required', 'title');
    if (isset($b['done']) && !is_bool($b['done'])) fail(400, 'validation_failed', 'done must be true or false', 'done');
    $d = random_bytes(16);
    $d[6] = chr(ord($d[6]) & 0x0f | 0x40);
    $d[8] = chr(ord($d[8]) & 0x3f | 0x80);
    $id = vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($d), 4));
    $fields = json_encode($b);
    $db->begin_transaction();
    $st = $db->prepare('INSERT INTO app_records (project_id, env, collection, id, owner, fields, created_at, updated_at) '
        . 'VALUES (?, ?, \'todos\', ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))');
    $st->bind_param('sssss', $project, $env, $id, $uid, $fields);
    $st->execute();
    $st = $db->prepare('SELECT id, owner, fields, created_at, updated_at FROM app_records WHERE project_id = ? AND env = ? '
        . 'AND collection = \'todos\' AND id = ?');
    $st->bind_param('sss', $project, $env, $id);
    $st->execute();
    $r = $st->get_result()->fetch_assoc();
    $db->commit();
    http_response_code(201);
    echo json_encode(record($r));
} elseif ($path === '/auth/login' && $method === 'POST') {
    $b = json_decode(file_get_contents('php://input'), true, 32);
    $email = is_array($b) && is_string($b['email'] ?? null) ? strtolower($b['email']) : '';
    $pw = is_array($b) && is_string($b['password'] ?? null) ? $b['password'] : '';
    $st = $db->prepare('SELECT id, email, password_hash, created_at FROM app_users WHERE project_id = ? AND env = ? AND email = ?');
    $st->bind_param('sss', $project, $env, $email);
    $st->execute();
    $u = $st->get_result()->fetch_assoc();
    if (!$u || !password_verify($pw, $u['password_hash'])) fail(401, 'unauthorized', 'Wrong e-mail address or password.');
    $tok = 'svca_' . bin2hex(random_bytes(32));
    $h = hash('sha256', $tok);
    $st = $db->prepare('INSERT INTO app_sessions (token_sha256, user_id, project_id, env, created_at, expires_at) '
        . 'VALUES (?, ?, ?, ?, UTC_TIMESTAMP(3), DATE_ADD(UTC_TIMESTAMP(3), INTERVAL 2592000 SECOND))');
    $st->bind_param('ssss', $h, $u['id'], $project, $env);
    $st->execute();
    setcookie('svc_app_session', $tok, ['path' => '/_svc/', 'httponly' => true, 'samesite' => 'Lax', 'expires' => time() + 2592000]);
    echo json_encode(['user' => ['id' => $u['id'], 'email' => $u['email'], 'createdAt' => $u['created_at']]]);
} else {
    fail(404, 'not_found', 'Not found.');
}
