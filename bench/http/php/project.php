<?php
// project.php: the PHP-FPM + mysqli peer of GET /api/projects/:id: the same JWT check and the same SELECT (bench/http/run.sh).
// Settings from PHP-FPM's pool environment: JWT_SECRET, JWT_ISSUER, SVC_DB_SOCKET, SVC_DB_USER, SVC_DB_NAME.
// The connection is persistent ("p:"), as svc's is kept per process, and the statement prepared per request.

function b64url_decode(string $s)
{
    return base64_decode(strtr($s, '-_', '+/') . str_repeat('=', (4 - strlen($s) % 4) % 4), true);
}

function answer(int $status, string $body)
{
    http_response_code($status);
    header('Content-Type: application/json');
    echo $body;
    exit;
}

// The user id of a valid HS256 access token, or null.
function verify(?string $auth, string $secret, string $issuer)
{
    if ($auth === null || strncmp($auth, 'Bearer ', 7) !== 0)
        return null;
    $parts = explode('.', substr($auth, 7));
    if (count($parts) !== 3)
        return null;
    $head = json_decode((string)b64url_decode($parts[0]), true);
    if (!is_array($head) || ($head['alg'] ?? '') !== 'HS256')
        return null;
    $mac = hash_hmac('sha256', $parts[0] . '.' . $parts[1], $secret, true);
    if (!hash_equals($mac, (string)b64url_decode($parts[2])))
        return null;
    $c = json_decode((string)b64url_decode($parts[1]), true);
    if (!is_array($c) || ($c['iss'] ?? '') !== $issuer || ($c['kind'] ?? '') !== 'access' ||
        ($c['exp'] ?? 0) <= time() || strlen($c['sub'] ?? '') !== 36)
        return null;
    return $c['sub'];
}

$id = basename(parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH));
if (strlen($id) !== 36)
    answer(404, '{"error":"not_found"}');
$user = verify($_SERVER['HTTP_AUTHORIZATION'] ?? null, getenv('JWT_SECRET'), getenv('JWT_ISSUER') ?: 'svc');
if ($user === null)
    answer(401, '{"error":"unauthorized"}');

$db = new mysqli('p:localhost', getenv('SVC_DB_USER') ?: 'root', '', getenv('SVC_DB_NAME') ?: 'svc', 0,
                 getenv('SVC_DB_SOCKET'));
$st = $db->prepare(
    "SELECT p.id, p.workspace_id, p.folder_id, p.slug, p.name, p.description, p.template, " .
    "p.visibility, p.thumbnail_url, DATE_FORMAT(p.published_at, '%Y-%m-%d %H:%i:%s.%f'), p.custom_domain, " .
    "DATE_FORMAT(p.created_at, '%Y-%m-%d %H:%i:%s.%f'), DATE_FORMAT(p.updated_at, '%Y-%m-%d %H:%i:%s.%f'), " .
    "p.created_by, m.role, COALESCE(u.is_platform_admin, 0) FROM projects p " .
    "LEFT JOIN workspace_members m ON m.workspace_id = p.workspace_id AND m.user_id = ? " .
    "LEFT JOIN users u ON u.id = ? WHERE p.id = ? AND (? = -1 OR ? = (p.deleted_at IS NOT NULL))");
$all = 0;
$st->bind_param('sssii', $user, $user, $id, $all, $all);
$st->execute();
$row = $st->get_result()->fetch_row();
$st->close();
if ($row === null)
    answer(404, '{"error":"not_found"}');
if ($row[14] === null && $row[7] !== 'public' && (string)$row[15] !== '1')
    answer(403, '{"error":"forbidden"}');
$names = ['id', 'workspaceId', 'folderId', 'slug', 'name', 'description', 'template', 'visibility',
          'thumbnailUrl', 'publishedAt', 'customDomain', 'createdAt', 'updatedAt'];
answer(200, json_encode(array_combine($names, array_slice($row, 0, 13)), JSON_UNESCAPED_SLASHES));
