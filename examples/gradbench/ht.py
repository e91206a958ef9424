"""Hand tracking: the distances between observed points and the vertices of
a skinned hand model posed by ``theta`` (GradBench's ht eval, "simple"
variant, a dense Jacobian with respect to theta).

theta holds the global rotation (angle-axis, 3), the translation (3), then
for each of the 5 fingers 4 angles (two at the base joint, one at each of
the two others). The model — each bone's rest transform relative to its
parent, the inverses of the rest absolute transforms, the rest vertex
positions (homogeneous) and the skinning weights — is data."""

import numpy as np


def to_pose_params(theta, nbones):
    pose_params = np.zeros((nbones + 3, 3))
    pose_params[0, :] = theta[0:3]
    pose_params[1, :] = np.ones(3)
    pose_params[2, :] = theta[3:6]
    i_theta = 6
    i_pose_params = 5
    n_fingers = 5
    for i_finger in range(n_fingers):
        for i in [1, 2, 3]:
            pose_params[i_pose_params, 0] = theta[i_theta]
            i_theta += 1
            if i == 1:
                pose_params[i_pose_params, 1] = theta[i_theta]
                i_theta += 1
            i_pose_params += 1
        i_pose_params += 1
    return pose_params


def euler_angles_to_rotation_matrix(xzy):
    tx = xzy[0]
    ty = xzy[2]
    tz = xzy[1]

    Rx = np.eye(3)
    Rx[1, 1] = np.cos(tx)
    Rx[2, 1] = np.sin(tx)
    Rx[1, 2] = -Rx[2, 1]
    Rx[2, 2] = Rx[1, 1]

    Ry = np.eye(3)
    Ry[0, 0] = np.cos(ty)
    Ry[2, 0] = np.sin(ty)
    Ry[0, 2] = -Ry[2, 0]
    Ry[2, 2] = Ry[0, 0]

    Rz = np.eye(3)
    Rz[0, 0] = np.cos(tz)
    Rz[1, 0] = np.sin(tz)
    Rz[0, 1] = -Rz[1, 0]
    Rz[1, 1] = Rz[0, 0]

    return (Rz @ Ry) @ Rx


def posed_relative(rot_param, base_relative):
    tr = np.eye(4)
    tr[:3, :3] = euler_angles_to_rotation_matrix(rot_param)
    return base_relative @ tr


def get_posed_relatives(pose_params, base_relatives):
    nbones = base_relatives.shape[0]
    relatives = np.zeros((nbones, 4, 4))
    for i in range(nbones):
        relatives[i] = posed_relative(pose_params[i + 3], base_relatives[i])
    return relatives


def relatives_to_absolutes(relatives, parents):
    absolutes = np.zeros_like(relatives)
    for i in range(relatives.shape[0]):
        if parents[i] == -1:
            absolutes[i] = relatives[i]
        else:
            absolutes[i] = absolutes[parents[i]] @ relatives[i]
    return absolutes


def angle_axis_to_rotation_matrix(angle_axis):
    n = np.sqrt(np.sum(angle_axis ** 2))
    if n < 0.0001:
        return np.eye(3)
    x, y, z = angle_axis / n
    s, c = np.sin(n), np.cos(n)
    R = np.zeros((3, 3))
    R[0, 0] = x * x + (1 - x * x) * c
    R[0, 1] = x * y * (1 - c) - z * s
    R[0, 2] = x * z * (1 - c) + y * s
    R[1, 0] = x * y * (1 - c) + z * s
    R[1, 1] = y * y + (1 - y * y) * c
    R[1, 2] = y * z * (1 - c) - x * s
    R[2, 0] = x * z * (1 - c) - y * s
    R[2, 1] = z * y * (1 - c) + x * s
    R[2, 2] = z * z + (1 - z * z) * c
    return R


def apply_global_transform(pose_params, positions):
    R = angle_axis_to_rotation_matrix(pose_params[0])
    R *= pose_params[1]
    t = pose_params[2]
    return (R @ positions.T).T + t


def get_skinned_vertex_positions(pose_params, base_relatives, parents,
                                 inverse_base_absolutes, base_positions, weights):
    relatives = get_posed_relatives(pose_params, base_relatives)
    absolutes = relatives_to_absolutes(relatives, parents)
    transforms = absolutes @ inverse_base_absolutes
    # positions[v, b]: vertex v moved by bone b's transform
    positions = np.einsum("bij,vj->vbi", transforms, base_positions)
    blended = np.sum(positions * weights[:, :, None], axis=1)[:, :3]
    return apply_global_transform(pose_params, blended)


def hand_objective(theta, parents, base_relatives, inverse_base_absolutes, base_positions,
                   weights, points, correspondences):
    nbones = base_relatives.shape[0]
    pose_params = to_pose_params(theta, nbones)
    vertex_positions = get_skinned_vertex_positions(
        pose_params, base_relatives, parents, inverse_base_absolutes, base_positions, weights)
    return points - vertex_positions[correspondences]
